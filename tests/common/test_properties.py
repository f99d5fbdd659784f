"""seaway.properties reads .properties files exactly as java.util.Properties.load does.

One test per rule, then a differential test: thousands of random texts built from the
characters the rules care about, loaded by the JVM's own ``Properties.load`` and by ours.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from seaway.properties import PropertiesError, format_properties, load_properties, load_properties_file

HERE = Path(__file__).parent


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a=b", {"a": "b"}),
        ("a:b", {"a": "b"}),
        ("a b", {"a": "b"}),
        ("a\tb", {"a": "b"}),
        ("a \t = \t b", {"a": "b"}),
        ("a = = b", {"a": "= b"}),  # one separator, the second '=' is value
        ("a  :b", {"a": "b"}),
        ("a", {"a": ""}),
        ("a=", {"a": ""}),
        ("=b", {"": "b"}),
    ],
)
def test_key_value_separators(text: str, expected: dict[str, str]) -> None:
    assert load_properties(text) == expected


def test_value_keeps_trailing_white_space_and_inner_separators() -> None:
    assert load_properties("url = jdbc:postgresql://h:5432/db  \n") == {"url": "jdbc:postgresql://h:5432/db  "}


def test_leading_white_space_and_blank_lines_are_skipped() -> None:
    assert load_properties("\n   \n\t\f  key=value\n\n") == {"key": "value"}


@pytest.mark.parametrize("marker", ["#", "!"])
def test_comments_are_whole_lines_and_never_continue(marker: str) -> None:
    text = f"{marker} comment\\\nkey=v\n   {marker} indented\nx=1 {marker} not a comment"
    assert load_properties(text) == {"key": "v", "x": "1 " + marker + " not a comment"}


def test_continuation_joins_lines_and_drops_the_next_leading_white_space() -> None:
    assert load_properties("list = a,\\\n    b,\\\n\t c\n") == {"list": "a,b,c"}


def test_continuation_line_starting_with_hash_is_not_a_comment() -> None:
    assert load_properties("k=a\\\n#b") == {"k": "a#b"}


def test_even_backslashes_do_not_continue() -> None:
    assert load_properties("path=c:\\\\\nnext=1") == {"path": "c:\\", "next": "1"}


def test_blank_line_ends_a_continuation() -> None:
    assert load_properties("k=a\\\n\nj=b") == {"k": "a", "j": "b"}


def test_continuation_at_end_of_text() -> None:
    assert load_properties("k=a\\") == {"k": "a"}
    assert load_properties("k=a\\\n") == {"k": "a"}


@pytest.mark.parametrize("newline", ["\n", "\r", "\r\n"])
def test_every_line_terminator(newline: str) -> None:
    assert load_properties(f"a=1{newline}b=2\\{newline}  3{newline}") == {"a": "1", "b": "23"}


def test_escapes_in_keys_and_values() -> None:
    text = "my\\:key\\=x\\ y = tab\\tnl\\nret\\rff\\fq\\q\\\\"
    assert load_properties(text) == {"my:key=x y": "tab\tnl\nret\rff\fqq\\"}


def test_unicode_escapes() -> None:
    assert load_properties("name=caf\\u00e9 \\u0041") == {"name": "café A"}
    assert load_properties("smile=\\uD83D\\uDE00") == {"smile": "\U0001f600"}  # a UTF-16 pair: one character


@pytest.mark.parametrize("text", ["k=\\u12", "k=\\u12G4", "k\\uzzzz=v"])
def test_malformed_unicode_escape_is_refused(text: str) -> None:
    with pytest.raises(PropertiesError, match="Malformed"):
        load_properties(text)


def test_later_duplicates_win() -> None:
    assert load_properties("a=1\na=2") == {"a": "2"}


def test_file_is_read_as_utf8(tmp_path: Path) -> None:
    path = tmp_path / "w.properties"
    path.write_text("topic=données\n", encoding="utf-8")
    assert load_properties_file(path) == {"topic": "données"}


_TEXT = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=20)


@given(st.dictionaries(_TEXT, _TEXT, max_size=8))
def test_format_reads_back_as_written(props: dict[str, str]) -> None:
    assert load_properties(format_properties(props, header=["a header"])) == props


def test_format_escapes_as_java_stores() -> None:
    text = format_properties({"a key=x": " lead: #1\\", "tab": "\t"})
    assert text == "a\\ key\\=x=\\ lead\\: \\#1\\\\\ntab=\\t\n"


# -- the JVM's own reading, side by side ---------------------------------------------------------

_PIECES = ["a", "b", "k", "=", ":", " ", "\t", "\f", "\\", "\\\\", "\n", "\r", "\r\n", "#", "!", "u", "\\u",
           "0", "4", "1", "F", "é", "\\t", "\\n", "\\u0041", "\\uD83D\\uDE00", "x y"]


def _random_text(rng: random.Random) -> str:
    return "".join(rng.choice(_PIECES) for _ in range(rng.randrange(0, 40)))


def _from_java_hex(field: str) -> str:
    return bytes.fromhex(field[1:]).decode("utf-16-be", "surrogatepass")


@pytest.mark.timeout(120)
def test_same_as_java_util_properties(tmp_path: Path) -> None:
    java = shutil.which("java")
    assert java, "the test suite needs Java 17 (scripts/test.sh documents it)"
    rng = random.Random(20261125)
    formatted = [format_properties({_random_text(rng): _random_text(rng) for _ in range(3)}) for _ in range(300)]
    texts = ["\\", " \\", "\\\n", "k=\\", "\\\n\n", "a\\\n", "#\\", *formatted,
             *(_random_text(rng) for _ in range(3000))]
    files = []
    for i, text in enumerate(texts):
        path = tmp_path / f"{i}.properties"
        path.write_bytes(text.encode("utf-8"))
        files.append(str(path))
    result = subprocess.run([java, str(HERE / "PropertiesDump.java"), *files],
                            capture_output=True, text=True, timeout=100, check=True)
    lines = result.stdout.splitlines()
    assert len(lines) == len(texts)
    for text, line in zip(texts, lines, strict=True):
        try:
            ours: dict[str, str] | None = load_properties(text)
        except PropertiesError:
            ours = None
        if line == "ERROR":
            theirs = None
        else:
            pairs = (field.split("=") for field in line.split(" ")[1:])
            theirs = {_from_java_hex(k): _from_java_hex(v) for k, v in pairs}
        assert ours == theirs, f"text {text!r}"
