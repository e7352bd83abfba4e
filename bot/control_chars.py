"""Control characters in text from outside, made inert wherever questbot shows that text.

A repository's output, a model's words, a comment, a remote server's answer may hold what a
terminal obeys rather than shows: escape sequences (``ESC ] 0 ; title BEL`` retitles the
window, ``ESC [ 2 J`` clears the screen, ``ESC c`` resets it), their one-byte C1 forms
(U+009B is a CSI to some terminals, U+009D an OSC), a carriage return that lets one line
overwrite another ("FAIL" printed over with "pass"), a bell, and the bidirectional overrides
and isolates that make text display in an order other than its own ("Trojan Source"). The
GitHub renderer removes them (``bot.words.markdown.neutralise``); so does everything that
prints to an operator's terminal or writes a log line, through this module:

* ``without_controls`` — escape sequences removed whole (so no ``[31m`` is left behind), then
  every other C0 and C1 control, ``DEL`` and bidirectional control; tab and newline kept;
* ``for_terminal`` — that, after every line break (``\\r``, ``\\r\\n``, form feed, the Unicode
  separators) became a newline: a line can no longer be written over;
* ``one_line`` — that, on one line;
* ``say`` — print it, to stdout or stderr (what the command line prints with);
* ``json_safe`` — a JSON text with the characters JSON itself leaves raw (``DEL``, C1, the
  bidirectional controls, the Unicode separators) written as ``\\u`` escapes: the JSON means
  the same, and a terminal showing it shows them as text.
"""

from __future__ import annotations

import re
import sys

_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI: cursor, erase, colour, mode
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"  # OSC…
    r"|\x1b[ -/]*[0-~]")  # the rest: ESC c (reset), ESC ( B (character set), ESC 7 …
"""A terminal escape sequence: CSI; a string command (OSC, DCS, SOS, PM, APC) up to its
terminator or the end of the line; any other ESC sequence."""
BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{BIDI}]")
_BREAK = re.compile("\r\n|[\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
_JSON_RAW = re.compile(f"[\\x7f-\\x9f{BIDI}\u2028\u2029]")


def without_controls(text: str) -> str:
    """``text`` with escape sequences removed whole, then every other control character and
    bidirectional control; tab and newline kept."""
    return _CONTROL.sub("", _SEQUENCE.sub("", text))


def for_terminal(text: str) -> str:
    """``text`` as lines a terminal only displays: every line break a newline, no escape
    sequence, control character or bidirectional control."""
    return without_controls(_BREAK.sub("\n", text))


def one_line(text: str) -> str:
    """``for_terminal(text)`` on one line, its whitespace collapsed."""
    return " ".join(for_terminal(text).split())


def say(text: str, *, err: bool = False) -> None:
    """Print ``text`` for a terminal (``for_terminal``), on stdout or with ``err`` stderr."""
    print(for_terminal(text), file=sys.stderr if err else sys.stdout, flush=err)


def json_safe(line: str) -> str:
    """A JSON text with ``DEL``, C1 controls, bidirectional controls and the Unicode line
    separators written as ``\\u`` escapes (JSON escapes only C0 controls of its own accord)."""
    return _JSON_RAW.sub(lambda found: f"\\u{ord(found.group()):04x}", line)
