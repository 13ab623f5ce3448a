"""ViT explorer in Streamlit: the Gradio explorer's twin, laid out over the same tab logic (app.tabs); each tab
is drawn by its module in app/streamlit_ui/.

    streamlit run app/streamlit_server.py      (or: bash scripts/run.sh --ui streamlit)

(app/streamlit_server.py serves this page behind the server's limits; `streamlit run` on this file serves it
without them, as AppTest runs it.)

Results live in st.session_state; re-draws from them (layer, head, rollout, colours) run as fragments,
without the rest of the page and without a forward pass.
"""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `streamlit run` puts app/ first, not the repo

from app.backend.service import AUTO, MAX_MODELS, WEIGHT_LABELS, WEIGHT_MODES, default_models  # noqa: E402
from app.server.context import VISITOR  # noqa: E402
from app.server.logs import configure as configure_logging  # noqa: E402
from app.server.streamlit_adapter import session_id  # noqa: E402
from app.server.streamlit_guard import CLOSED  # noqa: E402
from app.streamlit_ui.alternet import alternet_tab  # noqa: E402
from app.streamlit_ui.compare import analyze, compare_tab  # noqa: E402
from app.streamlit_ui.dataset import dataset_section  # noqa: E402
from app.streamlit_ui.lazy import drawn  # noqa: E402
from app.streamlit_ui.paper import paper_tab, paper_widget  # noqa: E402
from app.streamlit_ui.photo import digest, photo  # noqa: E402
from app.streamlit_ui.resources import service  # noqa: E402
from app.streamlit_ui.tour import linked, tour_tab  # noqa: E402
from app.tabs import notice as offline_notice  # noqa: E402
from app.views import texts as text  # noqa: E402
from app.views.page_style import CONTRAST_CSS, DESCRIBE_PLOTS, FOCUS_CSS, KEEP_FOCUS, LAYOUT_CSS  # noqa: E402
from app.views.texts import LABEL  # noqa: E402

configure_logging()  # the server log laid out as Gradio's
st.set_page_config(page_title="ViT explorer", page_icon="🔭", layout="wide")
state = st.session_state
state.setdefault("runs", [])
# whose turn this session's model work takes: its visitor (served by app/streamlit_server.py, the address behind
# the trusted proxies only); a session seen now is not closed (app/server/streamlit_guard.Closed)
VISITOR.set(st.context.ip_address or "local")
SESSION = session_id()
CLOSED.seen(SESSION)
STYLE = f"""<style>
[data-testid=stMainBlockContainer] {{padding-top: 3.5rem}}
[data-testid=stTabs] [role=tablist] {{flex-wrap: wrap; overflow: visible; row-gap: 4px}}
[data-testid=stMultiSelectTagsContainer], [data-testid=stMultiSelectTagsContainer] > [role=group],
[data-testid=stMultiSelect] div:has(> [data-testid=stMultiSelectTagsContainer]),
[data-testid=stMultiSelect] div:has(> [role=group] > [data-testid=stMultiSelectTagsContainer]) {{
  flex-wrap: wrap; overflow: visible; height: auto !important; max-height: none !important}}
[data-testid=stMultiSelectTagsContainer] [data-tag] {{max-width: 100%}}
{FOCUS_CSS}{CONTRAST_CSS}{LAYOUT_CSS}</style>"""  # the tabs and the chosen models wrap onto another line rather than
# scroll out of sight (as Gradio's tabs, overflow "wrap", and its checkboxes); the focus ring, the contrast, the
# AlterNet tab at a phone's width and the plots' toolbars: app/views/page_style; less room above the title (6rem:
# Streamlit's header is 3.75rem), for the tabs to start on the first screen
st.html(STYLE)
st.html(f"<script>({DESCRIBE_PLOTS})(); ({KEEP_FOCUS})()</script>", unsafe_allow_javascript=True)  # page_style
st.markdown(text.INTRO)
notice = st.empty()  # the offline notice: in full until a photo is analyzed, then in a line (app.tabs.notice)
if not service().online:
    notice.warning(offline_notice(False, bool(state.runs)))
picture = photo(SESSION)
photo_digest = digest(picture[0])  # once per rerun: which photo the results are for
checked, typed = st.columns([3, 2])
labels = dict((name, label) for label, name in service().models())
models = checked.multiselect(
    LABEL.models.format(count=MAX_MODELS),
    list(labels),
    default=list(default_models(service().online)),
    max_selections=MAX_MODELS,
    select_all=False,  # its bulk action would pass the limit
    key="models",
    format_func=labels.get,
)
typed_models = typed.text_input(
    LABEL.typed_models, placeholder=LABEL.typed_placeholder, help=text.ANY_TIMM, key="typed_models"
)
weights = st.radio(
    LABEL.weights,
    WEIGHT_MODES,
    format_func=WEIGHT_LABELS.get,
    index=WEIGHT_MODES.index(AUTO),
    horizontal=True,
    help=text.WEIGHTS,
    key="weights",
)
if st.button(LABEL.analyze, type="primary", key="analyze"):
    analyze(picture, models, typed_models, weights)
    if state.runs and not service().online:
        notice.warning(offline_notice(False, True))
TABS = ["Compare models", "AlterNet (Section 4)", "Paper figures", "Guided tour"]
# A deep link into the tour (?step=3 or ?step=variance) opens the session on the tour; from then on the tab shown
# is the one last clicked, whatever the address says (the tour's Back and Next keep it in step with the page).
opening = state.setdefault("opening_tab", TABS[3] if st.query_params.get("step") else TABS[0])
compare_section, alternet_section, paper_section, tour_section = st.tabs(
    TABS, default=opening, key="tab", on_change="rerun"
)
with compare_section:
    compare_tab(photo_digest)
    dataset_section(models, typed_models, weights)
with alternet_section:
    alternet_tab(picture, photo_digest, bool(alternet_section.open))
with paper_section:
    if drawn(paper_section, paper_widget):
        paper_tab(picture)
with tour_section:
    if tour_section.open:  # its Back and Next are buttons, which hold no value
        tour_tab()
linked(bool(tour_section.open))
