"""HTML page bodies for ``web_fetch``: the conversion to markdown (renderers.md §14).

A port of the original's converter: turndown 7.2 with the options ``headingStyle: "atx"``, ``codeBlockStyle:
"fenced"``, ``bulletListMarker: "-"``, the GFM plugin (strikethrough, highlighted code blocks, tables, task list
items), ``script`` / ``style`` / ``noscript`` removed, and the tool's two table rules (cells without span
expansion, a separator row after a heading row). The input goes through the same steps: parsed as a document
inside an ``<x-turndown>`` wrapper (:mod:`._html_tree`), whitespace collapsed, rules applied bottom-up, the
output trimmed. A body nested deeper than the tool's conversion ceiling, or one on which the original's
converter fails, is shown as its source, as the original does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

from toolcanon.jsonvalue import format_number
from toolcanon.renderers._ecma import js_trim, utf16_length
from toolcanon.renderers._html_tree import ELEMENT, TEXT, Node, outer_html, parse_document

__all__ = ["MAX_CONVERSION_DEPTH", "exceeds_conversion_depth", "html_to_markdown"]


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


MAX_CONVERSION_DEPTH: Final = 512

_JS_SPACE: Final = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_ASCII_SPACE: Final = " \t\r\n"
_LINE_TERMINATORS: Final = re.compile("[\n\r\u2028\u2029]")

_BLOCK: Final = _names(
    "address article aside audio blockquote body canvas center dd dir div dl dt fieldset figcaption figure footer "
    "form frameset h1 h2 h3 h4 h5 h6 header hgroup hr html isindex li main menu nav noframes noscript ol output p "
    "pre section table tbody td tfoot th thead tr ul"
)
_VOID: Final = _names("area base br col command embed hr img input keygen link meta param source track wbr")
_MEANINGFUL_WHEN_BLANK: Final = _names("a table thead tbody tfoot th td iframe script audio video")
_REMOVED: Final = frozenset({"script", "style", "noscript"})
_HTML_TABLE_CONTENT: Final = _names("ul ol h1 h2 h3 h4 h5 h6 hr blockquote")
_ALIGN_BORDERS: Final = {"left": ":---", "right": "---:", "center": ":---:"}
_HIGHLIGHT: Final = re.compile(r"highlight-(?:text|source)-([a-z0-9]+)")
_LANGUAGE: Final = re.compile(f"language-([^{_JS_SPACE}]+)")
_MARKDOWN_ESCAPES: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    (re.compile(r"\\"), r"\\\\"),
    (re.compile(r"\*"), r"\\*"),
    (re.compile(r"^-"), r"\\-"),
    (re.compile(r"^\+ "), r"\\+ "),
    (re.compile(r"^(=+)"), r"\\\1"),
    (re.compile(r"^(#{1,6}) "), r"\\\1 "),
    (re.compile(r"`"), r"\\`"),
    (re.compile(r"^~~~"), r"\\~~~"),
    (re.compile(r"\["), r"\\["),
    (re.compile(r"\]"), r"\\]"),
    (re.compile(r"^>"), r"\\>"),
    (re.compile(r"_"), r"\\_"),
    (re.compile(r"^([0-9]+)\. "), r"\1\\. "),
)


class _ConverterFailed(Exception):
    """Where the original's converter throws (a property read on a text node); the source is shown instead."""


# --- the depth preflight --------------------------------------------------------------------------------------

_VOID_ELEMENTS: Final = _names("area base br col embed hr img input link meta param source track wbr")
_RAW_TEXT_ELEMENTS: Final = frozenset({"script", "style", "noscript"})
_NAME_CHAR: Final = re.compile(r"[a-zA-Z0-9-]*")


def exceeds_conversion_depth(html: str) -> bool:
    """The tool's conservative scan: whether the lexical element stack ever exceeds ``MAX_CONVERSION_DEPTH``."""
    lower = html.translate(_ASCII_LOWER)
    open_elements: list[str] = []
    offset = 0
    in_comment = False
    length = len(html)
    while offset < length:
        start = html.find("<", offset)
        if in_comment:
            end = html.find("-->", offset)
            if end != -1 and (start == -1 or end < start):
                in_comment = False
                offset = end + 3
                continue
        if start == -1:
            break
        if not in_comment and html.startswith("<!--", start):
            in_comment = True
            offset = start + 4
            continue
        cursor = start + 1
        closing = html[cursor : cursor + 1] == "/"
        if closing:
            cursor += 1
        name_start = cursor
        cursor = _NAME_CHAR.match(html, cursor).end()  # type: ignore[union-attr]
        if cursor == name_start or not html[name_start].isascii() or not html[name_start].isalpha():
            offset = start + 1
            continue
        name = lower[name_start:cursor]
        quote = ""
        while cursor < length:
            char = html[cursor]
            cursor += 1
            if quote:
                if char == quote:
                    quote = ""
            elif char in "\"'":
                quote = char
            elif char == ">":
                break
        if html[cursor - 1 : cursor] != ">" or cursor - 1 < 0:
            break
        if closing:
            if not in_comment and open_elements and open_elements[-1] == name:
                open_elements.pop()
        else:
            last = cursor - 2
            while last >= 0 and html[last] in _JS_WHITESPACE_SET:
                last -= 1
            if name not in _VOID_ELEMENTS and html[last : last + 1] != "/":
                open_elements.append(name)
                if len(open_elements) > MAX_CONVERSION_DEPTH:
                    return True
                if not in_comment and name in _RAW_TEXT_ELEMENTS:
                    end = _raw_text_end(lower, name, cursor)
                    if end == -1:
                        break
                    offset = end
                    continue
        offset = cursor
    return False


_ASCII_LOWER: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_JS_WHITESPACE_SET: Final = frozenset(
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def _raw_text_end(lower: str, name: str, start: int) -> int:
    prefix = "</" + name
    candidate = lower.find(prefix, start)
    while candidate != -1:
        following = lower[candidate + len(prefix) : candidate + len(prefix) + 1]
        if following in ("", ">", "/") or following in _JS_WHITESPACE_SET:
            return candidate
        candidate = lower.find(prefix, candidate + len(prefix))
    return candidate


# --- string helpers with JavaScript's semantics ---------------------------------------------------------------


def _trim_newlines(text: str) -> str:
    return text.strip("\n")


def _escape_markdown(text: str) -> str:
    for pattern, replacement in _MARKDOWN_ESCAPES:
        text = pattern.sub(replacement, text)
    return text


def _clean_attribute(value: str | None) -> str:
    return re.sub(f"(\n+[{_JS_SPACE}]*)+", "\n", value) if value else ""


def _escape_link_destination(destination: str) -> str:
    escaped = re.sub(r"([<>()])", r"\\\1", destination)
    return f"<{escaped}>" if " " in escaped else escaped


def _js_number(text: str) -> float:
    """``Number(text)`` for a string."""
    stripped = js_trim(text)
    if not stripped:
        return 0.0
    if re.fullmatch(r"0[xX][0-9a-fA-F]+", stripped):
        return float(int(stripped[2:], 16))
    if re.fullmatch(r"0[oO][0-7]+", stripped):
        return float(int(stripped[2:], 8))
    if re.fullmatch(r"0[bB][01]+", stripped):
        return float(int(stripped[2:], 2))
    if re.fullmatch(r"[+-]?(Infinity|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)", stripped):
        return float(stripped.replace("Infinity", "inf"))
    return float("nan")


def _js_number_text(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return format_number(0 if value == 0 else value)


def _prefix_each_line(text: str, prefix: str) -> str:
    """``text.replace(/^/gm, prefix)``: a prefix at the start and after every line terminator."""
    return prefix + _LINE_TERMINATORS.sub(lambda match: match.group() + prefix, text)


# --- the tree facts the rules read ------------------------------------------------------------------------------


@dataclass(slots=True)
class _Text:
    """What the rules read of an element's ``textContent``: its edge white space and whether it is all white space."""

    blank: bool
    lead: str
    trail: str


def _text_summary(text: str) -> _Text:
    stripped = text.lstrip(_JS_WHITESPACE_STRING)
    if not stripped:
        return _Text(True, text, text)
    return _Text(False, text[: len(text) - len(stripped)], text[len(text.rstrip(_JS_WHITESPACE_STRING)) :])


_JS_WHITESPACE_STRING: Final = "".join(sorted(_JS_WHITESPACE_SET))


class _Facts:
    """Per-node facts computed once, bottom-up, after whitespace collapsing (the tree no longer changes)."""

    def __init__(self, root: Node) -> None:
        self.text: dict[Node, _Text] = {}
        self.has_void: dict[Node, bool] = {}
        self.has_meaningful: dict[Node, bool] = {}
        for node in _post_order(root):
            if node.kind == TEXT:
                self.text[node] = _text_summary(node.data)
                continue
            if node.kind != ELEMENT:
                self.text[node] = _Text(True, "", "")
                continue
            children = list(node.children())
            summaries = [self.text[child] for child in children]
            if all(summary.blank for summary in summaries):
                whole = "".join(summary.lead for summary in summaries)
                self.text[node] = _Text(True, whole, whole)
            else:
                first = next(index for index, summary in enumerate(summaries) if not summary.blank)
                last = max(index for index, summary in enumerate(summaries) if not summary.blank)
                lead = "".join(summary.lead for summary in summaries[:first]) + summaries[first].lead
                trail = summaries[last].trail + "".join(summary.trail for summary in summaries[last + 1 :])
                self.text[node] = _Text(False, lead, trail)
            elements = [child for child in children if child.kind == ELEMENT]
            self.has_void[node] = any(
                (not child.foreign and child.name in _VOID) or self.has_void[child] for child in elements
            )
            self.has_meaningful[node] = any(
                (not child.foreign and child.name in _MEANINGFUL_WHEN_BLANK) or self.has_meaningful[child]
                for child in elements
            )

    def ends_with_space(self, node: Node) -> bool:
        summary = self.text[node]
        return summary.trail.endswith(" ")

    def starts_with_space(self, node: Node) -> bool:
        return self.text[node].lead.startswith(" ")


def _post_order(root: Node) -> Iterator[Node]:
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded or node.first is None:
            yield node
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(list(node.children())))


def _is(node: Node | None, names: frozenset[str]) -> bool:
    return node is not None and node.kind == ELEMENT and not node.foreign and node.name in names


def _named(node: Node | None, *names: str) -> bool:
    """``node.nodeName`` is one of the upper-case ``names`` (an HTML element)."""
    return node is not None and node.kind == ELEMENT and not node.foreign and node.name in names


def _matches(node: Node, *names: str) -> bool:
    """A turndown filter by name: ``node.nodeName.toLowerCase()`` is one of ``names``."""
    return node.kind == ELEMENT and node.name in names


# --- whitespace collapsing --------------------------------------------------------------------------------------


def _collapse_whitespace(root: Node) -> None:
    """turndown's ``collapseWhitespace`` (adapted from collapse-whitespace): a faithful, iterative port."""
    if root.first is None or _named(root, "pre"):
        return
    previous_text: Node | None = None
    keep_leading = False
    previous: Node | None = None
    node: Node = _next(previous, root)
    while node is not root:
        if node.kind == TEXT:
            text = re.sub("[ \r\n\t]+", " ", node.data)
            if (previous_text is None or previous_text.data.endswith(" ")) and not keep_leading and text[:1] == " ":
                text = text[1:]
            if not text:
                node = _remove(node)
                continue
            node.data = text
            previous_text = node
        elif node.kind == ELEMENT:
            if _is(node, _BLOCK) or _named(node, "br"):
                if previous_text is not None:
                    previous_text.data = _strip_one_space(previous_text.data)
                previous_text = None
                keep_leading = False
            elif _is(node, _VOID) or _named(node, "pre"):
                previous_text = None
                keep_leading = True
            elif previous_text is not None:
                keep_leading = False
        else:
            node = _remove(node)
            continue
        following = _next(previous, node)
        previous = node
        node = following
    if previous_text is not None:
        previous_text.data = _strip_one_space(previous_text.data)
        if not previous_text.data:
            _remove(previous_text)


def _strip_one_space(text: str) -> str:
    return text[:-1] if text.endswith(" ") else text


def _remove(node: Node) -> Node:
    following = node.next or node.parent
    assert following is not None
    node.detach()
    return following


def _next(previous: Node | None, current: Node) -> Node:
    if (previous is not None and previous.parent is current) or _named(current, "pre"):
        following = current.next or current.parent
    else:
        following = current.first or current.next or current.parent
    assert following is not None
    return following


# --- the conversion ---------------------------------------------------------------------------------------------


def _join(output: list[str], replacement: str) -> None:
    tail = output.pop() if output else ""
    head = tail.rstrip("\n")
    body = replacement.lstrip("\n")
    newlines = max(len(tail) - len(head), len(replacement) - len(body))
    separator = "\n\n"[:newlines]
    if head:
        output.append(head)
    if separator:
        output.append(separator)
    if body:
        output.append(body)


class _Converter:
    """One conversion: the facts of the tree and the rules, in turndown's order of precedence."""

    def __init__(self, root: Node) -> None:
        self.root = root
        self.facts = _Facts(root)
        self.code: dict[Node, bool] = {root: False}
        self.rules = self._rules()
        self.table_rows: dict[Node, list[Node]] = {}

    def convert(self) -> str:
        output = self._process(self.root)
        _join(output, "")  # the referenceLink rule's (empty) append
        return re.sub(f"[\t\r\n{_JS_SPACE}]+\\Z", "", re.sub("^[\t\r\n]+", "", "".join(output)))

    def _process(self, root: Node) -> list[str]:
        frames: list[tuple[Node, list[str], Iterator[Node]]] = [(root, [], root.children())]
        while True:
            node, output, children = frames[-1]
            child = next(children, None)
            if child is None:
                frames.pop()
                if not frames:
                    return output
                _join(frames[-1][1], self._replacement(node, "".join(output)))
                continue
            parent = child.parent
            self.code[child] = _named(child, "code") or bool(parent is not None and self.code.get(parent))
            if child.kind == TEXT:
                _join(output, child.data if self.code[child] else _escape_markdown(child.data))
            elif child.kind == ELEMENT:
                if self._is_blank(child):
                    _join(output, self._replacement(child, ""))
                else:
                    frames.append((child, [], child.children()))
            else:
                _join(output, "")

    # --- per-node facts ---

    def _is_blank(self, node: Node) -> bool:
        return (
            not _is(node, _VOID)
            and not _is(node, _MEANINGFUL_WHEN_BLANK)
            and self.facts.text[node].blank
            # getElementsByTagName("BR") from a foreign element compares local names as written: never a match.
            and (bool(node.foreign) or not self.facts.has_void[node])
            and (bool(node.foreign) or not self.facts.has_meaningful[node])
        )

    def _flanking(self, node: Node) -> tuple[str, str]:
        if _is(node, _BLOCK):
            return "", ""
        summary = self.facts.text[node]
        leading_ascii = summary.lead[: len(summary.lead) - len(summary.lead.lstrip(_ASCII_SPACE))]
        leading = summary.lead
        if summary.blank:
            trailing = trailing_ascii = ""
        else:
            trailing = summary.trail
            trailing_ascii = trailing[len(trailing.rstrip(_ASCII_SPACE)) :]
        if leading_ascii and self._flanked(node, "left"):
            leading = leading[len(leading_ascii) :]
        if trailing_ascii and self._flanked(node, "right"):
            trailing = trailing[: len(trailing) - len(trailing_ascii)]
        return leading, trailing

    def _flanked(self, node: Node, side: str) -> bool:
        sibling = node.previous if side == "left" else node.next
        if sibling is None:
            return False
        if sibling.kind == TEXT:
            return sibling.data.endswith(" ") if side == "left" else sibling.data.startswith(" ")
        if sibling.kind == ELEMENT and not _is(sibling, _BLOCK):
            return self.facts.ends_with_space(sibling) if side == "left" else self.facts.starts_with_space(sibling)
        return False

    def _replacement(self, node: Node, content: str) -> str:
        leading, trailing = self._flanking(node)
        if leading or trailing:
            content = js_trim(content)
        if self._is_blank(node):
            return leading + ("\n\n" if _is(node, _BLOCK) else "") + trailing
        return leading + self._rule(node)(content, node) + trailing

    def _rule(self, node: Node) -> Callable[[str, Node], str]:
        for applies, replacement in self.rules:
            if applies(node):
                return replacement
        if _matches(node, *_REMOVED):
            return lambda content, node: ""
        return self._default

    def _rules(self) -> tuple[tuple[Callable[[Node], bool], Callable[[str, Node], str]], ...]:
        return (
            (lambda node: _matches(node, "tr"), self._table_row),
            (lambda node: _matches(node, "th", "td"), self._table_cell),
            (self._is_task_list_item, self._task_list_item),
            (lambda node: _matches(node, "thead", "tbody", "tfoot"), lambda content, node: content),
            (lambda node: _matches(node, "colgroup", "col"), lambda content, node: ""),
            (lambda node: _matches(node, "caption"), lambda content, node: ""),
            (lambda node: _named(node, "table"), self._table),
            (lambda node: _matches(node, "del", "s", "strike"), lambda content, node: f"~~{content}~~"),
            (self._is_highlighted_code_block, self._highlighted_code_block),
            (lambda node: _matches(node, "p"), lambda content, node: f"\n\n{content}\n\n"),
            (lambda node: _matches(node, "br"), lambda content, node: "  \n"),
            (lambda node: _matches(node, "h1", "h2", "h3", "h4", "h5", "h6"), self._heading),
            (lambda node: _matches(node, "blockquote"), self._blockquote),
            (lambda node: _matches(node, "ul", "ol"), self._list),
            (lambda node: _matches(node, "li"), self._list_item),
            (self._is_fenced_code_block, self._fenced_code_block),
            (lambda node: _matches(node, "hr"), lambda content, node: "\n\n* * *\n\n"),
            (lambda node: _named(node, "a") and bool(node.attributes.get("href")), self._link),
            (lambda node: _matches(node, "em", "i"), lambda content, node: f"_{content}_" if js_trim(content) else ""),
            (
                lambda node: _matches(node, "strong", "b"),
                lambda content, node: f"**{content}**" if js_trim(content) else "",
            ),
            (self._is_inline_code, self._inline_code),
            (lambda node: _matches(node, "img"), self._image),
        )

    def _default(self, content: str, node: Node) -> str:
        return f"\n\n{content}\n\n" if _is(node, _BLOCK) else content

    # --- turndown's rules ---

    def _heading(self, content: str, node: Node) -> str:
        return f"\n\n{'#' * int(node.name[1])} {content}\n\n"

    def _blockquote(self, content: str, node: Node) -> str:
        return f"\n\n{_prefix_each_line(_trim_newlines(content), '> ')}\n\n"

    def _list(self, content: str, node: Node) -> str:
        parent = node.parent
        if _named(parent, "li") and parent is not None and _last_element_child(parent) is node:
            return "\n" + content
        return f"\n\n{content}\n\n"

    def _list_item(self, content: str, node: Node) -> str:
        prefix = "-   "
        parent = node.parent
        if _named(parent, "ol") and parent is not None:
            start = parent.attributes.get("start")
            index = next(position for position, child in enumerate(parent.element_children()) if child is node)
            number = _js_number(start) + index if start else float(index + 1)
            prefix = _js_number_text(number) + ".  "
        is_paragraph = content.endswith("\n")
        content = _trim_newlines(content) + ("\n" if is_paragraph else "")
        content = content.replace("\n", "\n" + " " * utf16_length(prefix))
        return prefix + content + ("\n" if node.next is not None else "")

    def _is_fenced_code_block(self, node: Node) -> bool:
        return _named(node, "pre") and _named(node.first, "code")

    def _fenced_code_block(self, content: str, node: Node) -> str:
        code_element = node.first
        assert code_element is not None
        match = _LANGUAGE.search(code_element.attributes.get("class") or "")
        language = match.group(1) if match else ""
        code = code_element.text_content()
        fence_size = 3
        for run in re.finditer("(?:^|(?<=[\n\r\u2028\u2029]))`{3,}", code):
            if len(run.group()) >= fence_size:
                fence_size = len(run.group()) + 1
        fence = "`" * fence_size
        body = code[:-1] if code.endswith("\n") else code
        return f"\n\n{fence}{language}\n{body}\n{fence}\n\n"

    def _link(self, content: str, node: Node) -> str:
        href = _escape_link_destination(node.attributes["href"])
        title = _clean_attribute(node.attributes.get("title")).replace('"', '\\"')
        title_part = f' "{title}"' if title else ""
        return f"[{content}]({href}{title_part})"

    def _is_inline_code(self, node: Node) -> bool:
        has_siblings = node.previous is not None or node.next is not None
        return _named(node, "code") and not (_named(node.parent, "pre") and not has_siblings)

    def _inline_code(self, content: str, node: Node) -> str:
        if not content:
            return ""
        content = re.sub("\r?\n|\r", " ", content)
        extra = " " if re.search("^`|^ [^\n\r\u2028\u2029]*?[^ ][^\n\r\u2028\u2029]* \\Z|`\\Z", content) else ""
        delimiter = "`"
        runs = set(re.findall("`+", content))
        while delimiter in runs:
            delimiter += "`"
        return f"{delimiter}{extra}{content}{extra}{delimiter}"

    def _image(self, content: str, node: Node) -> str:
        alt = _escape_markdown(_clean_attribute(node.attributes.get("alt")))
        source = _escape_link_destination(node.attributes.get("src") or "")
        title = _clean_attribute(node.attributes.get("title"))
        title_part = ' "' + title.replace('"', '\\"') + '"' if title else ""
        return f"![{alt}]({source}{title_part})" if source else ""

    # --- the GFM plugin's rules ---

    def _is_highlighted_code_block(self, node: Node) -> bool:
        return (
            _named(node, "div")
            and _HIGHLIGHT.search(node.attributes.get("class", "")) is not None
            and _named(node.first, "pre")
        )

    def _highlighted_code_block(self, content: str, node: Node) -> str:
        match = _HIGHLIGHT.search(node.attributes.get("class") or "")
        language = match.group(1) if match else ""
        assert node.first is not None
        return f"\n\n```{language}\n{node.first.text_content()}\n```\n\n"

    def _is_task_list_item(self, node: Node) -> bool:
        is_checkbox = _dom_type(node) == "checkbox" or node.attributes.get("role") == "checkbox"
        if not is_checkbox:
            return False
        parent = node.parent
        grandparent = parent.parent if parent is not None else None
        in_item = _named(grandparent, "li")
        return _named(parent, "li") or (_named(parent, "label") and in_item) or (_named(parent, "span") and in_item)

    def _task_list_item(self, content: str, node: Node) -> str:
        checked = (
            "checked" in node.attributes if _named(node, "input") else node.attributes.get("aria-checked") == "true"
        )
        return "[x] " if checked else "[ ] "

    def _table(self, content: str, node: Node) -> str:
        if _contains(node, _HTML_TABLE_CONTENT):
            html = outer_html(node)
            wrapper = _ancestor(node, "div")
            if wrapper is None or "joplin-table-wrapper" not in _class_list(wrapper):
                return f'\n\n<div class="joplin-table-wrapper">{html}</div>\n\n'
            return html
        rows = self._rows(node)
        if (len(rows) == 1 and _child_count(rows[0]) <= 1) or _contains(node, frozenset({"table"})):
            return content
        content = re.sub("\n+", "\n", content)
        lines = js_trim(content).split("\n")
        second = lines[1] if len(lines) >= 2 else ",".join(lines)
        divider = re.search(r"\| :?---", second) is not None
        columns = max((_child_count(row) for row in rows), default=0)
        empty_header = ""
        if columns and not divider:
            empty_header = "|" + "     |" * columns + "\n|"
            for column in range(columns):
                alignment = _column_alignment(rows, column)
                empty_header += " " + (_ALIGN_BORDERS[alignment] if alignment else "---") + " |"
        caption_node = next((item for item in node.descendants() if _named(item, "caption")), None)
        caption_text = caption_node.text_content() if caption_node is not None else ""
        caption = f"{caption_text}\n\n" if caption_text else ""
        table = (empty_header + content).lstrip(_JS_WHITESPACE_STRING)
        return f"\n\n{caption}{table}\n\n"

    def _rows(self, table: Node) -> list[Node]:
        """``table.rows``: every ``tr`` below ``table``, nested tables' included (computed once per table)."""
        rows = self.table_rows.get(table)
        if rows is None:
            rows = self.table_rows[table] = [node for node in table.descendants() if _named(node, "tr")]
        return rows

    # --- the tool's two table rules ---

    def _table_cell(self, content: str, node: Node) -> str:
        row = node.parent
        assert row is not None
        index = next(position for position, child in enumerate(row.children()) if child is node)
        return _table_cell_text(content, index)

    def _table_row(self, content: str, node: Node) -> str:
        border = ""
        if _is_heading_row(node, self._rows):
            border = "".join(_table_cell_text(_border(cell), index) for index, cell in enumerate(_cells(node)))
        return "\n" + content + ("\n" + border if border else "")


def _table_cell_text(content: str, index: int) -> str:
    text = js_trim(content).replace("\n\r", "<br>").replace("\n", "<br>")
    text = re.sub(r"\|+", r"\\|", text)
    text += " " * max(0, 3 - utf16_length(text))
    return ("| " if index == 0 else " ") + text + " |"


# Elements whose DOM ``type`` property reflects the attribute as written, and those whose ``type`` is one of
# their keywords (matched ignoring ASCII case).
_TYPE_REFLECTED: Final = _names("a area embed li link ol object param script style ul source")
_TYPE_KEYWORDS: Final = {
    "input": ("text", _names(
        "text hidden search tel url email password datetime date month week time datetime-local number range color "
        "checkbox radio file submit image reset button"
    )),
    "button": ("submit", _names("submit reset button menu")),
    "menu": ("toolbar", _names("context popup toolbar")),
    "menuitem": ("command", _names("command checkbox radio")),
}  # fmt: skip


def _dom_type(node: Node) -> str | None:
    """``node.type`` in the original's DOM, for the elements that have one."""
    if node.kind != ELEMENT or node.foreign:
        return None
    if node.name in _TYPE_REFLECTED:
        return node.attributes.get("type", "")
    if node.name in _TYPE_KEYWORDS:
        missing, keywords = _TYPE_KEYWORDS[node.name]
        value = node.attributes.get("type", "").translate(_ASCII_LOWER)
        return value if value in keywords else missing
    return None


def _cells(row: Node) -> list[Node]:
    return [node for node in row.descendants() if _named(node, "td", "th")]


def _is_heading_row(row: Node, rows_of: Callable[[Node], list[Node]]) -> bool:
    if row.foreign:
        raise _ConverterFailed("row.cells is undefined")
    section = row.parent if row.parent is not None and row.parent.kind == ELEMENT else None
    if section is None:
        raise _ConverterFailed("row.parentElement is null")
    table = section.parent if section.parent is not None and section.parent.kind == ELEMENT else None
    if _named(section, "thead"):
        is_heading_section = True
    elif _named(table, "table", "thead", "tbody", "tfoot") and table is not None:
        rows = rows_of(table)
        is_heading_section = bool(rows) and rows[0] is row
    elif _named(table, "textarea", "frameset"):
        is_heading_section = False  # their ``rows`` is a number or a string: no row is its first item
    else:
        raise _ConverterFailed("table.rows is undefined")
    return is_heading_section and all(_named(cell, "th") for cell in _cells(row))


def _alignment(cell: Node) -> str:
    if cell.kind != ELEMENT:
        raise _ConverterFailed("node.getAttribute is not a function")
    return (cell.attributes.get("align") or _style_property(cell.attributes.get("style"), "text-align")).lower()


def _border(cell: Node) -> str:
    return _ALIGN_BORDERS.get(_alignment(cell), "---")


def _column_alignment(rows: list[Node], column: int) -> str:
    votes = {"left": 0, "right": 0, "center": 0, "": 0}
    chosen = ""
    for row in rows:
        children = list(row.children())
        if column < len(children):
            alignment = _alignment(children[column])
            if alignment in votes:
                votes[alignment] += 1
                if votes[alignment] > votes[chosen]:
                    chosen = alignment
    return chosen


def _child_count(node: Node) -> int:
    return sum(1 for _ in node.children())


def _contains(node: Node, names: frozenset[str]) -> bool:
    return any(_is(item, names) for item in node.descendants())


def _ancestor(node: Node, name: str) -> Node | None:
    parent = node.parent
    while parent is not None and not _named(parent, name):
        parent = parent.parent
    return parent


def _class_list(node: Node) -> list[str]:
    return re.split("[\t\n\f\r ]+", node.attributes.get("class") or "")


def _last_element_child(node: Node) -> Node | None:
    last = None
    for child in node.element_children():
        last = child
    return last


def _style_property(style: str | None, name: str) -> str:
    """``element.style.getPropertyValue(name)`` as the original's DOM parses a ``style`` attribute."""
    if not style:
        return ""
    found: dict[str, str] = {}
    depth = 0
    quote = ""
    value_start = 0
    property_start = 0
    current: str | None = None
    for index, char in enumerate(style):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char in "'\"":
            # The original's parser means to honour a backslash before a quote but reads the quote itself.
            if not quote:
                quote = char
            elif quote == char:
                quote = ""
        elif char == ":" and current is None and depth == 0 and not quote:
            current = _hyphenate(js_trim(style[property_start:index]))
            value_start = index + 1
        elif char == ";" and current is not None and value_start > 0 and depth == 0 and not quote:
            found[current] = _without_priority(js_trim(style[value_start:index]))
            property_start = index + 1
            value_start = 0
            current = None
    if current is not None and value_start:
        found[current] = _without_priority(js_trim(style[value_start:]))
    return found.get(name, "")


def _hyphenate(name: str) -> str:
    return re.sub("[a-z][A-Z]", lambda match: match.group()[0] + "-" + match.group()[1], name).lower()


def _without_priority(value: str) -> str:
    return js_trim(value[: -len("!important")]) if value.endswith("!important") else value


# --- entry point ------------------------------------------------------------------------------------------------


def _root(source: str) -> Node:
    document = parse_document(f'<x-turndown id="turndown-root">{source}</x-turndown>')
    root = next(
        node for node in document.descendants() if node.kind == ELEMENT and node.attributes.get("id") == "turndown-root"
    )
    return root


def html_to_markdown(source: str) -> str:
    """The markdown the original shows for an HTML body (the source itself when it does not convert it)."""
    if exceeds_conversion_depth(source):
        return source
    if source == "":
        return ""
    root = _root(source)
    _collapse_whitespace(root)
    try:
        return _Converter(root).convert()
    except _ConverterFailed:
        return source
