#!/usr/bin/env bash
# The Streamlit Space's command (its Dockerfile's CMD): the explorer on every address at port 8501 ($PORT), as its
# non-root user. Inside the Space's iframe Streamlit's XSRF cookie is a third-party cookie the browser drops, and
# every upload is refused with 403 (streamlit#9397): the Space's own proxy is the origin check, so XSRF is off here.
set -euo pipefail
cd "$(dirname "$0")/../.."
export VIT_EXPLORER_TRUSTED_PROXIES=${VIT_EXPLORER_TRUSTED_PROXIES:-10.0.0.0/8,172.16.0.0/12,192.168.0.0/16}
exec "${PYTHON:-python}" -m streamlit run app/streamlit_server.py --server.address 0.0.0.0 \
  --server.port "${PORT:-8501}" --server.headless true \
  --server.enableXsrfProtection false --server.enableCORS false
