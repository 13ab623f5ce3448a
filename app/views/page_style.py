"""Styles both front ends add to their page, written once: a focus ring that a keyboard user can see on every control
(3 px, #0b57d0: 6.4:1 against white, offset from the control so that it stands on the page's own background), also
where a framework hides the native input and draws its own box (Streamlit's checkboxes and radios, Gradio's
tabs)."""

FOCUS_COLOUR = "#0b57d0"
FOCUS_WIDTH_PX = 3

CONTRAST_CSS = """
[data-testid=stCaptionContainer], [data-testid=stCaptionContainer] p {color: #5b5b66 !important; opacity: 1 !important}
"""  # Streamlit's captions are #828180 on white, 3.9:1, under WCAG's 4.5:1 (Gradio's own: its theme, gradio_ui/styles)

FOCUS_CSS = f"""
:focus-visible {{outline: {FOCUS_WIDTH_PX}px solid {FOCUS_COLOUR} !important; outline-offset: 2px !important}}
label:has(> input:focus-visible) {{outline: {FOCUS_WIDTH_PX}px solid {FOCUS_COLOUR}; outline-offset: 2px}}
"""

# Gives every plotly plot its text alternative: the words a figure carries in `layout.meta.alt`
# (app/views/alt_text.described) become the name of its drawing (role img), and the second drawing plotly lays
# over it (title, legend: said in the words already) is hidden from screen readers. Run once per page.
DESCRIBE_PLOTS = """() => {
    if (window.describingPlots) return;
    window.describingPlots = true;
    const describe = () => document.querySelectorAll('.js-plotly-plot').forEach((plot) => {
        const alt = plot.layout && plot.layout.meta && plot.layout.meta.alt;
        const [drawing, ...over] = plot.querySelectorAll('svg.main-svg');
        if (!alt || !drawing || drawing.getAttribute('aria-label') === alt) return;
        drawing.setAttribute('role', 'img');
        drawing.setAttribute('aria-label', alt);
        over.forEach((svg) => svg.setAttribute('aria-hidden', 'true'));
    });
    let queued = false;
    new MutationObserver(() => {
        if (queued) return;
        queued = true;
        setTimeout(() => { queued = false; describe(); }, 200);
    }).observe(document.body, {childList: true, subtree: true});
    describe();
}"""

# Keeps a keyboard user's place when a framework redraws the control they were on (the photo widget after a file
# is chosen, in both front ends): focus would fall to the page's top; it goes to the first control of the same
# widget instead. Only where the focused element itself left the page: a click on the page's background still
# takes focus away. Run once per page.
KEEP_FOCUS = """() => {
    if (window.keepingFocus) return;
    window.keepingFocus = true;
    const WIDGET = '.block, [data-testid=stElementContainer]';  // a Gradio component, a Streamlit element
    const FOCUSABLE = 'button:not([disabled]), input:not([type=file]):not([disabled]), select, textarea, a[href], '
        + '[tabindex]:not([tabindex="-1"])';
    let last = null, home = null;
    document.addEventListener('focusin', (event) => { last = event.target; home = last.closest(WIDGET); });
    const restore = () => {
        if (document.activeElement !== document.body || !last || last.isConnected || !home || !home.isConnected) return;
        const next = [...home.querySelectorAll(FOCUSABLE)].find((element) => element.offsetParent !== null);
        if (next) next.focus({preventScroll: true});
    };
    new MutationObserver(() => setTimeout(restore, 50)).observe(document.body, {childList: true, subtree: true});
}"""
