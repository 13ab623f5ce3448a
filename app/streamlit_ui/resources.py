"""The Streamlit app's shared resources: one Service (models cached, one model thread) and one CifarLab
and one PaperFindings per server process, whatever the number of sessions; tests import them to count forward passes."""

from __future__ import annotations

import streamlit as st

from app.backend.cifar_lab import CifarLab
from app.backend.service import Service
from app.exports.paper_findings import PaperFindings


@st.cache_resource
def service() -> Service:
    return Service.start()


@st.cache_resource
def lab() -> CifarLab:
    return CifarLab(service())


@st.cache_resource
def board() -> PaperFindings:
    return PaperFindings(service())
