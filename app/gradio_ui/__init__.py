"""The Gradio front end's tab panels: widgets and their bindings; the decisions are in app.tabs."""
