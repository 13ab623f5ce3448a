"""The Streamlit front end's shared resources; the page itself is app/streamlit_app.py."""
