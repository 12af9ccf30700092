"""helpers.plotting's plain-text copy of styled tables: what reading_time.py and a terminal read."""

import pandas as pd

from helpers.plotting import styled_text


def test_styled_text_keeps_caption_formats_and_every_cell():
    table = pd.DataFrame({"lane_us": [14.2345, 9.5], "engine": ["tensor", "vector"]}, index=["a", "b"])
    text = styled_text(table.style.format(precision=1).set_caption("Per engine: us"))
    lines = text.splitlines()
    assert lines[0] == "Per engine: us"
    assert "14.2" in text and "14.2345" not in text  # the Styler's number format, as in the HTML
    assert [line.split() for line in lines[2:]] == [["a", "14.2", "tensor"], ["b", "9.5", "vector"]]


def test_styled_text_without_caption_is_the_table_alone():
    text = styled_text(pd.DataFrame({"x": [1, 22]}).style)
    assert text.splitlines()[0].split() == ["x"]
    assert len(text.splitlines()) == 3
