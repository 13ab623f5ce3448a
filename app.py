"""Hugging Face Spaces entry point (`app_file: app.py`): launches the Gradio app of package `app`."""

from app.gradio_app import main

if __name__ == "__main__":
    main()
