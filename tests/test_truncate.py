"""The output cap: a result larger than the cap reaches the model cut at a character boundary, with a note."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from knime_mcp.errors import ConfigError
from knime_mcp.tools.results import ImagePart
from knime_mcp.tools.truncate import DEFAULT_LIMIT_BYTES, MAX_IMAGE_BYTES, cap_image, cap_text


def test_text_within_the_cap_is_returned_unchanged() -> None:
    text = "ü" * (DEFAULT_LIMIT_BYTES // 2)

    assert cap_text(text) == (text, False)


def test_text_over_the_cap_is_cut_to_the_cap_including_a_note_saying_how_much_was_cut() -> None:
    text = "x" * 250_000

    capped, truncated = cap_text(text)

    kept, note = capped.split("\n\n[Output truncated: ")
    assert truncated
    assert len(capped.encode()) <= DEFAULT_LIMIT_BYTES
    assert text.startswith(kept) and len(kept) > DEFAULT_LIMIT_BYTES - 300
    assert note == (
        f"showing the first {len(kept):,} of 250,000 bytes; {250_000 - len(kept):,} bytes were cut. "
        "The full result is in the output table or the tool-call log.]"
    )


@pytest.mark.parametrize("char", ["é", "€", "😀"])
def test_the_cut_never_splits_a_multi_byte_character(char: str) -> None:
    for shift in range(4):
        text = "a" * shift + char * 2_000

        capped, truncated = cap_text(text, limit_bytes=1_000)

        kept = capped.split("\n\n[Output truncated")[0]
        assert truncated and text.startswith(kept)
        assert len(capped.encode("utf-8")) <= 1_000


def test_text_of_exactly_the_cap_is_not_cut() -> None:
    assert cap_text("a" * 1_000, limit_bytes=1_000) == ("a" * 1_000, False)


def test_a_fifty_megabyte_result_is_capped_to_the_default_limit() -> None:
    capped, truncated = cap_text("0123456789" * 5_000_000)

    assert truncated and len(capped.encode()) <= DEFAULT_LIMIT_BYTES
    assert "of 50,000,000 bytes" in capped


def test_text_with_a_lone_surrogate_from_a_json_escape_is_still_capped() -> None:
    capped, truncated = cap_text("\ud800" + "a" * 5_000, limit_bytes=1_000)

    assert truncated and capped.startswith("aaa")
    capped.encode("utf-8")


def test_a_cap_too_small_for_the_note_is_a_config_error_naming_the_minimum() -> None:
    with pytest.raises(ConfigError) as caught:
        cap_text("text", limit_bytes=100)

    assert str(caught.value) == (
        "The output cap of 100 bytes is too small. Hint: Set the output cap to at least 1,000 bytes."
    )


def test_an_image_within_the_limits_is_sent_as_it_is() -> None:
    # Given a small PNG
    buffer = io.BytesIO()
    Image.new("RGB", (40, 30), "blue").save(buffer, format="PNG")
    image = ImagePart(data=base64.b64encode(buffer.getvalue()).decode(), mime_type="image/png")
    # When it is capped
    capped = cap_image(image)
    # Then it is the very same image, without a note
    assert capped.image is image and capped.note == ""


@pytest.mark.parametrize("data", ["iVBORw0=", "not base64!"])
def test_small_data_that_is_no_readable_image_is_left_for_the_models_api_to_judge(data: str) -> None:
    # Given image content too small to matter that Pillow cannot read
    image = ImagePart(data=data, mime_type="image/png")
    # When it is capped, then it is sent as it is, as before there was a cap
    assert cap_image(image) == (image, "")


def test_large_data_that_is_no_readable_image_is_left_out_with_the_reason() -> None:
    # Given image content over the byte limit that is no image Pillow can read, so it cannot be scaled down
    image = ImagePart(data=base64.b64encode(b"\0" * (MAX_IMAGE_BYTES + 1)).decode(), mime_type="image/png")
    # When it is capped, then it is left out, and the note says why
    assert cap_image(image) == (
        None,
        f"its {MAX_IMAGE_BYTES + 1:,} bytes exceed {MAX_IMAGE_BYTES:,} and it cannot be read to be scaled down",
    )
