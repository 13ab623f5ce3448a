"""Text alternatives (app/views/alt_text.py): plain words from what the page prints beside a picture."""

from __future__ import annotations

from app.views import alt_text


def test_a_maps_text_alternative_is_its_title_and_caption_in_plain_words():
    caption = "**Integrated Gradients** of `ResNet-50` for *cat* ([how](https://example.org/ig))"
    assert (
        alt_text.map_of("Where it looks", caption) == "Where it looks: Integrated Gradients of ResNet-50 for cat (how)"
    )
    assert alt_text.map_of("Where it looks", "") == "Where it looks"


def test_a_picture_is_named_with_the_first_sentence_beside_it():
    said = "**Here**: the photo cut into 8 x 8 = 64 patches of 4 px. Each is one token."
    assert (
        alt_text.picture("### Images as patches", said)
        == "Images as patches: Here: the photo cut into 8 x 8 = 64 patches of 4 px."
    )
    assert alt_text.photo("cat.jpg") == "The chosen photo: cat.jpg" and alt_text.photo("") == "The chosen photo"
