"""What is made from runs for people to keep: figures for slides and the teaching pack (export.py, also
`python -m app.exports.export`; export_browser.py: kaleido and Chromium), and the paper's stored figures with their
recompute (paper_findings.py)."""
