"""Styles both front ends add to their page, written once: a focus ring that a keyboard user can see on every control
(3 px, #0b57d0: 6.4:1 against white, offset from the control so that it stands on the page's own background), also
where a framework hides the native input and draws its own box (Streamlit's checkboxes and radios, Gradio's
tabs); the AlterNet tab's table and drawing at a phone's width; plotly's logo link left out; a tour's deep link
brought into view."""

from app.views.alternet import DRAWING_MIN_WIDTH

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
# is chosen, in both front ends; Streamlit's tabs after an arrow key opened one): focus would fall to the page's top;
# it goes to the open tab if a tab had it, else to the first control of the same widget. Only where focus fell
# without a click or a tap (a click on the page's background still takes focus away), while the page has the
# window's focus (Tab out to the browser's own bar is not pulled back), and where the control left the page or was
# hidden (a control that let focus go on purpose keeps it gone: Gradio's dropdown after a choice), a tab excepted.
# Checked after each redraw and after focus leaves a control (one hidden in place drops focus without a redraw).
# Run once per page.
KEEP_FOCUS = """() => {
    if (window.keepingFocus) return;
    window.keepingFocus = true;
    const WIDGET = '.block, [data-testid=stElementContainer]';  // a Gradio component, a Streamlit element
    const FOCUSABLE = 'button:not([disabled]), input:not([type=file]):not([disabled]), select, textarea, a[href], '
        + '[tabindex]:not([tabindex="-1"])';
    let last = null, home = null, pointed = false;
    document.addEventListener('focusin', (event) => {
        last = event.target;
        home = last.closest(WIDGET);
        pointed = false;
    });
    document.addEventListener('pointerdown', () => { pointed = true; }, true);
    const shown = (element) => element && element.isConnected && element.getClientRects().length > 0;
    const restore = () => {
        if (document.activeElement !== document.body || !last || pointed || !document.hasFocus()) return;
        const tab = last.getAttribute('role') === 'tab' && document.querySelector('[role=tab][aria-selected=true]');
        if (!tab && shown(last)) return;
        const next = tab || (shown(home) && [...home.querySelectorAll(FOCUSABLE)].find((e) => e.offsetParent !== null));
        if (next) next.focus({preventScroll: true});
    };
    new MutationObserver(() => setTimeout(restore, 50)).observe(document.body, {childList: true, subtree: true});
    document.addEventListener('focusout', () => setTimeout(restore, 50));
}"""

STEPS_BOX = ":is(#alternet-steps, .st-key-alternet_steps)"  # the build-up table's box: Gradio's, Streamlit's
PHONE_PX = 700  # narrower than this, the page is laid out for a phone (one column)

# The AlterNet tab at a phone's width, in both front ends: the build-up table fits, its placements and accuracies
# wrapping, and "Step" stays whole (in its narrow column it wrapped a letter a line); on a wider screen the table
# scrolls in its box rather than the page. Fig 11 keeps its size and scrolls sideways in its box, with a scrollbar in
# sight and a line saying so wherever the box is narrower than the drawing (app/views/alternet.drawing_html).
# Plotly's logo, a link named "plotly-logomark" in every plot's toolbar and in the Tab order, is not drawn.
LAYOUT_CSS = f"""
{STEPS_BOX} table {{display: block; overflow-x: auto}}
{STEPS_BOX} th:first-child, {STEPS_BOX} td:last-child {{white-space: nowrap}}
@media (max-width: {PHONE_PX}px) {{
  {STEPS_BOX} :is(th, td) {{padding: 6px !important}}
  {STEPS_BOX} td:last-child {{white-space: normal}}
  {STEPS_BOX} code {{white-space: normal; overflow-wrap: anywhere}}
}}
.sideways {{container-type: inline-size}}
.sideways > .scrolls {{overflow-x: auto; max-width: 100%; scrollbar-width: thin; scrollbar-color: #8a8a94 #ececf0}}
.sideways > .scroll-hint {{display: none; margin: 4px 0 0; font-size: 0.85em; color: #5b5b66}}
@container (max-width: {DRAWING_MIN_WIDTH - 1}px) {{ .sideways > .scroll-hint {{display: block}} }}
.js-plotly-plot .modebar-btn--logo {{display: none !important}}
"""

# Brings what `selector` finds to the top of the screen once it is drawn, `margin` px below it (clear of a fixed
# header), and keeps it there while the page above it is still being laid out (photos, plots drawn late move it
# down), for a few seconds or until the visitor scrolls, types or clicks: a deep link into the tour (?step=) shows
# its step, not the page's top. Run once, where the deep link is read.
BRING_INTO_VIEW = """(selector, margin) => {
    const until = Date.now() + 6000;
    let moved = false;
    const visitor = () => { moved = true; };
    for (const kind of ['wheel', 'touchstart', 'keydown', 'mousedown']) {
        window.addEventListener(kind, visitor, {once: true, capture: true, passive: true});
    }
    const place = () => {
        if (moved || Date.now() > until) return;
        const target = document.querySelector(selector);
        if (target && target.getClientRects().length && Math.abs(target.getBoundingClientRect().top - margin) > 2) {
            target.style.scrollMarginTop = margin + 'px';
            target.scrollIntoView({block: 'start'});
        }
        setTimeout(place, 200);
    };
    place();
}"""
