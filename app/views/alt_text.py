"""Text alternatives for the pictures both front ends show (a screen reader reads them, as do the handout's images):
what each picture shows, in plain words, from the texts that the page prints beside it."""

from __future__ import annotations

import re

MARKUP = re.compile(r"[*_`#>]|\[|\]\([^)]*\)")


def plain(markdown: str) -> str:
    """Markdown as one line of plain text: no emphasis, links or headings, whitespace collapsed."""
    return " ".join(MARKUP.sub("", markdown).split())


def photo(name: str) -> str:
    return f"The chosen photo: {name}" if name else "The chosen photo"


def map_of(title: str, caption: str) -> str:
    """A column's map: its title ('Where it looks') and its caption, which names the method, model and class."""
    return plain(f"{title}: {caption}") if caption else plain(title)


def picture(title: str, text: str) -> str:
    """A picture beside a text: its title, then the text's first sentence."""
    first = plain(text).split(". ")[0].rstrip(".")
    return f"{plain(title)}: {first}." if first else plain(title)
