"""An HTML document tree built by the WHATWG tree-construction algorithm, and its serialization.

The builder follows the insertion modes that body content reaches (implied end tags, list items, headings, the
adoption agency for misnested formatting, the reconstruction of active formatting elements), tables (implied
sections and rows, cells, captions, column groups, foster parenting of misplaced content), ``select``, templates
(their contents outside the tree), the raw-text and RCDATA elements, and foreign ``svg`` / ``math`` content with
its integration points. Where the original's parser (domino) departs from the current standard, the builder
follows the parser: ``noscript`` is markup in the body, ``select`` takes no ``hr``, ``</p>`` and ``</br>`` in
foreign content take its end-tag rules. A document without a DOCTYPE is in quirks mode, so ``<table>`` does not
close an open ``<p>``. Framesets are read as ordinary elements; foreign tag and attribute names keep the case the
tokenizer gives them (lower case).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from toolcanon.renderers._html_tokens import Token, Tokenizer

__all__ = ["COMMENT", "ELEMENT", "TEXT", "Node", "outer_html", "parse_document"]


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


ELEMENT: Final = 1
TEXT: Final = 3
COMMENT: Final = 8
DOCUMENT: Final = 9
FRAGMENT: Final = 11


class Node:
    """A DOM node: an element (``name`` is its lowercase local name), a text, a comment or the document."""

    __slots__ = (
        "attributes",
        "content",
        "data",
        "first",
        "foreign",
        "kind",
        "last",
        "name",
        "next",
        "parent",
        "previous",
    )

    def __init__(self, kind: int, name: str = "", data: str = "", attributes: dict[str, str] | None = None) -> None:
        self.kind = kind
        self.name = name
        self.data = data
        self.attributes: dict[str, str] = attributes if attributes is not None else {}
        self.foreign = ""  # "svg" or "math" for an element of foreign content
        self.content: Node | None = None  # a template's contents, outside the tree
        self.parent: Node | None = None
        self.first: Node | None = None
        self.last: Node | None = None
        self.previous: Node | None = None
        self.next: Node | None = None

    def __repr__(self) -> str:
        return f"<{self.name or self.kind} {self.data[:20]!r}>"

    def children(self) -> Iterator[Node]:
        """The child nodes, in order (safe against removing the child just yielded)."""
        child = self.first
        while child is not None:
            following = child.next
            yield child
            child = following

    def append(self, child: Node) -> None:
        """Append ``child`` (detached first)."""
        self.insert_before(child, None)

    def insert_before(self, child: Node, reference: Node | None) -> None:
        """Insert ``child`` before ``reference`` (at the end when ``None``), detaching it first."""
        child.detach()
        child.parent = self
        if reference is None:
            child.previous, child.next = self.last, None
            if self.last is not None:
                self.last.next = child
            else:
                self.first = child
            self.last = child
            return
        child.previous, child.next = reference.previous, reference
        if reference.previous is not None:
            reference.previous.next = child
        else:
            self.first = child
        reference.previous = child

    def detach(self) -> None:
        """Remove this node from its parent."""
        parent = self.parent
        if parent is None:
            return
        if self.previous is not None:
            self.previous.next = self.next
        else:
            parent.first = self.next
        if self.next is not None:
            self.next.previous = self.previous
        else:
            parent.last = self.previous
        self.parent = self.previous = self.next = None

    def element_children(self) -> Iterator[Node]:
        """The element children, in order."""
        return (child for child in self.children() if child.kind == ELEMENT)

    def descendants(self) -> Iterator[Node]:
        """Every descendant in tree order."""
        node = self.first
        while node is not None:
            yield node
            if node.first is not None:
                node = node.first
                continue
            while node is not None and node.next is None:
                node = node.parent
                if node is self:
                    return
            if node is None:
                return
            node = node.next

    def text_content(self) -> str:
        """The concatenated data of the descendant text nodes (the node's own data for a text)."""
        if self.kind == TEXT:
            return self.data
        return "".join(node.data for node in self.descendants() if node.kind == TEXT)

    def is_special(self) -> bool:
        """In the standard's "special" category (HTML elements, and the integration points of foreign content)."""
        if self.kind != ELEMENT:
            return False
        if self.foreign:
            return self.name in _FOREIGN_SPECIAL[self.foreign]
        return self.name in _SPECIAL

    def is_html(self, *names: str) -> bool:
        """Whether this is an HTML element named one of ``names``."""
        return self.kind == ELEMENT and not self.foreign and self.name in names


# --- element categories of the standard ---------------------------------------------------------------------

_SPECIAL: Final = _names(
    "address applet area article aside base basefont bgsound blockquote body br button caption center col colgroup "
    "dd details dir div dl dt embed fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 head "
    "header hgroup hr html iframe img input keygen li link listing main marquee menu meta nav noembed noframes "
    "noscript object ol p param plaintext pre script search section select source style summary table tbody td "
    "template textarea tfoot th thead title tr track ul wbr xmp"
)
_FOREIGN_SPECIAL: Final = {
    "svg": frozenset({"foreignobject", "desc", "title"}),
    "math": frozenset({"mi", "mo", "mn", "ms", "mtext", "annotation-xml"}),
}
_SCOPE: Final = _names("applet caption html table td th marquee object template")
_LIST_SCOPE: Final = _SCOPE | {"ol", "ul"}
_BUTTON_SCOPE: Final = _SCOPE | {"button"}
_TABLE_SCOPE: Final = frozenset({"html", "table", "template"})
_IMPLIED_END: Final = _names("dd dt li optgroup option p rb rp rt rtc")
_FORMATTING: Final = _names("a b big code em font i nobr s small strike strong tt u")
_HEADINGS: Final = _names("h1 h2 h3 h4 h5 h6")
_CLOSES_P: Final = _names(
    "address article aside blockquote center details dialog dir div dl fieldset figcaption figure footer header "
    "hgroup main menu nav ol p search section summary ul"
)
_BLOCK_END: Final = _names(
    "address article aside blockquote button center details dialog dir div dl fieldset figcaption figure footer "
    "header hgroup listing main menu nav ol pre search section summary ul"
)
_VOID_IN_BODY: Final = _names("area br embed img keygen wbr")
_HEAD_IN_BODY: Final = _names("base basefont bgsound link meta noframes script style template title")
_TABLE_CONTEXT_IGNORED_IN_BODY: Final = _names("caption col colgroup frame head tbody td tfoot th thead tr")
_TABLE_SECTIONS: Final = frozenset({"tbody", "tfoot", "thead"})
_FOSTER_TARGETS: Final = frozenset({"table", "tbody", "tfoot", "thead", "tr"})
_BREAKS_FOREIGN: Final = _names(
    "b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i img li listing menu "
    "meta nobr ol p pre ruby s small span strong strike sub sup table tt u ul var"
)
_RAW_MODES: Final = {
    "title": "rcdata",
    "textarea": "rcdata",
    "style": "rawtext",
    "xmp": "rawtext",
    "iframe": "rawtext",
    "noembed": "rawtext",
    "noframes": "rawtext",
    "script": "script",
    "plaintext": "plaintext",
}

_MARKER: Final = Node(0, "#marker")


class _Builder:
    """The tree-construction stage: the stack of open elements, the active formatting list, insertion modes."""

    def __init__(self, source: str) -> None:
        self.tokens = Tokenizer(source)
        self.document = Node(DOCUMENT, "#document")
        self.html = Node(ELEMENT, "html")
        self.document.append(self.html)
        self.html.append(Node(ELEMENT, "head"))
        self.body = Node(ELEMENT, "body")
        self.html.append(self.body)
        self.stack: list[Node] = [self.html, self.body]
        self.formatting: list[Node] = []
        self.mode = "in body"
        self.original_mode = "in body"
        self.form: Node | None = None
        self.template_modes: list[str] = []
        self.foster = False
        self.skip_newline = False

    # --- the loop ---

    def run(self) -> Node:
        pending: list[str] = []
        for token in self.tokens:
            if token[0] == "text":
                pending.append(str(token[1]))  # one character run, however the tokenizer split it
                continue
            self._flush(pending)
            self.skip_newline = False
            self.process(token)
        self._flush(pending)
        return self.document

    def _flush(self, pending: list[str]) -> None:
        if not pending:
            return
        text = "".join(pending)
        pending.clear()
        if self.skip_newline:
            self.skip_newline = False
            text = text[1:] if text.startswith("\n") else text
        if text:
            self.process(("text", text))

    def process(self, token: Token) -> None:
        mode = self.mode
        if mode != "text" and self.current.foreign and self._in_foreign(token):
            return
        if mode == "text":
            self._text_mode(token)
        elif mode == "in body":
            self._in_body(token)
        elif mode == "in table":
            self._in_table(token)
        elif mode == "in table body":
            self._in_table_body(token)
        elif mode == "in row":
            self._in_row(token)
        elif mode == "in cell":
            self._in_cell(token)
        elif mode == "in caption":
            self._in_caption(token)
        elif mode == "in column group":
            self._in_column_group(token)
        elif mode == "in select":
            self._in_select(token)
        elif mode == "in select in table":
            self._in_select_in_table(token)
        elif mode == "in template":
            self._in_template(token)
        else:  # "after body"
            self._after_body(token)

    # --- tree helpers ---

    @property
    def current(self) -> Node:
        return self.stack[-1]

    def _insertion_point(self) -> tuple[Node, Node | None]:
        target = self.current
        if self.foster and target.is_html(*_FOSTER_TARGETS):
            return self._foster_point()
        return _contents(target), None

    def insert_text(self, text: str) -> None:
        if not text:
            return
        parent, before = self._insertion_point()
        previous = before.previous if before is not None else parent.last
        if previous is not None and previous.kind == TEXT:
            previous.data += text
        else:
            parent.insert_before(Node(TEXT, data=text), before)

    def insert_comment(self, data: str, parent: Node | None = None) -> None:
        if parent is not None:
            parent.append(Node(COMMENT, data=data))
            return
        target, before = self._insertion_point()
        target.insert_before(Node(COMMENT, data=data), before)

    def insert_element(self, name: str, attributes: dict[str, str], *, foreign: str = "") -> Node:
        element = Node(ELEMENT, name, attributes=dict(attributes))
        element.foreign = foreign
        parent, before = self._insertion_point()
        parent.insert_before(element, before)
        self.stack.append(element)
        return element

    def pop_until(self, *names: str) -> None:
        if not any(node.is_html(*names) for node in self.stack):
            return
        while self.stack:
            node = self.stack.pop()
            if node.is_html(*names):
                return

    def in_scope(self, names: frozenset[str] | tuple[str, ...], boundary: frozenset[str] = _SCOPE) -> bool:
        foreign_bounded = boundary is not _TABLE_SCOPE
        for node in reversed(self.stack):
            if not node.foreign:
                if node.name in names:
                    return True
                if node.name in boundary:
                    return False
            elif foreign_bounded and node.name in _FOREIGN_SPECIAL[node.foreign]:
                return False
        return False

    def in_select_scope(self, name: str) -> bool:
        for node in reversed(self.stack):
            if node.is_html(name):
                return True
            if not node.is_html("optgroup", "option"):
                return False
        return False

    def generate_implied_end_tags(self, except_for: str = "") -> None:
        while self.current.is_html(*_IMPLIED_END) and not self.current.is_html(except_for):
            self.stack.pop()

    def close_p(self) -> None:
        self.generate_implied_end_tags("p")
        self.pop_until("p")

    def close_p_in_button_scope(self) -> None:
        if self.in_scope(("p",), _BUTTON_SCOPE):
            self.close_p()

    def switch_tokenizer(self, name: str) -> None:
        mode = _RAW_MODES.get(name)
        if mode is not None:
            self.tokens.switch_to(mode, name)
            if mode != "plaintext":
                self.original_mode, self.mode = self.mode, "text"

    # --- active formatting elements ---

    def push_formatting(self, element: Node) -> None:
        same = 0
        for index in range(len(self.formatting) - 1, -1, -1):
            entry = self.formatting[index]
            if entry is _MARKER:
                break
            if entry.name == element.name and entry.attributes == element.attributes:
                same += 1
                if same == 3:
                    del self.formatting[index]
                    break
        self.formatting.append(element)

    def reconstruct_formatting(self) -> None:
        if not self.formatting or self.formatting[-1] is _MARKER or self.formatting[-1] in self.stack:
            return
        index = len(self.formatting) - 1
        while index > 0:
            entry = self.formatting[index - 1]
            if entry is _MARKER or entry in self.stack:
                break
            index -= 1
        for position in range(index, len(self.formatting)):
            entry = self.formatting[position]
            clone = self.insert_element(entry.name, entry.attributes)
            self.formatting[position] = clone

    def clear_formatting_to_marker(self) -> None:
        while self.formatting:
            if self.formatting.pop() is _MARKER:
                return

    def adoption_agency(self, name: str) -> bool:
        """The adoption agency algorithm; ``False`` when the token must be handled as "any other end tag"."""
        if self.current.is_html(name) and self.current not in self.formatting:
            self.stack.pop()
            return True
        for _outer in range(8):
            formatting = None
            for entry in reversed(self.formatting):
                if entry is _MARKER:
                    break
                if entry.name == name:
                    formatting = entry
                    break
            if formatting is None:
                return False
            if formatting not in self.stack:
                self.formatting.remove(formatting)
                return True
            if not self.in_scope((name,)):
                return True
            position = self.stack.index(formatting)
            furthest = next((node for node in self.stack[position + 1 :] if node.is_special()), None)
            if furthest is None:
                while self.stack.pop() is not formatting:
                    pass
                self.formatting.remove(formatting)
                return True
            common = self.stack[position - 1]
            bookmark = self.formatting.index(formatting)
            node = last = furthest
            node_index = self.stack.index(furthest)
            inner = 0
            while True:
                inner += 1
                node_index -= 1
                node = self.stack[node_index]
                if node is formatting:
                    break
                if inner > 3 and node in self.formatting:
                    self.formatting.remove(node)
                if node not in self.formatting:
                    del self.stack[node_index]
                    continue
                clone = Node(ELEMENT, node.name, attributes=dict(node.attributes))
                self.formatting[self.formatting.index(node)] = clone
                self.stack[node_index] = clone
                node = clone
                if last is furthest:
                    bookmark = self.formatting.index(clone) + 1
                node.append(last)
                last = node
            if self.foster and common.is_html(*_FOSTER_TARGETS):
                parent, before = self._foster_point()
                parent.insert_before(last, before)
            else:
                _contents(common).append(last)
            clone = Node(ELEMENT, formatting.name, attributes=dict(formatting.attributes))
            for child in list(furthest.children()):
                clone.append(child)
            furthest.append(clone)
            old = self.formatting.index(formatting)
            self.formatting.insert(bookmark, clone)
            del self.formatting[old if old < bookmark else old + 1]
            self.stack.remove(formatting)
            self.stack.insert(self.stack.index(furthest) + 1, clone)
        return True

    def _foster_point(self) -> tuple[Node, Node | None]:
        tables = [index for index, node in enumerate(self.stack) if node.is_html("table")]
        templates = [index for index, node in enumerate(self.stack) if node.is_html("template")]
        if templates and (not tables or templates[-1] > tables[-1]):
            return _contents(self.stack[templates[-1]]), None
        if not tables:
            return self.html, None
        table = self.stack[tables[-1]]
        if table.parent is not None:
            return table.parent, table
        return _contents(self.stack[tables[-1] - 1]), None

    def _in_template_contents(self) -> bool:
        return any(node.is_html("template") for node in self.stack)

    def start_template(self, attributes: dict[str, str]) -> None:
        template = self.insert_element("template", attributes)
        template.content = Node(FRAGMENT, "#document-fragment")
        self.formatting.append(_MARKER)
        self.mode = "in template"
        self.template_modes.append("in template")

    def end_template(self) -> None:
        if not any(node.is_html("template") for node in self.stack):
            return
        while self.current.is_html(*_IMPLIED_END_THOROUGHLY):
            self.stack.pop()
        self.pop_until("template")
        self.clear_formatting_to_marker()
        if self.template_modes:
            self.template_modes.pop()
        self.reset_mode()

    def _in_template(self, token: Token) -> None:
        kind, name = token[0], str(token[1]) if token[0] in ("start", "end") else ""
        if kind in ("text", "comment", "doctype"):
            self._in_body(token)
            return
        if kind == "end":
            if name == "template":
                self.end_template()
            return
        if name in _HEAD_IN_BODY:
            self._start_in_body(name, _attributes(token), bool(token[3]))
            return
        mode = "in body"
        if name in ("caption", "colgroup", "tbody", "tfoot", "thead"):
            mode = "in table"
        elif name == "col":
            mode = "in column group"
        elif name == "tr":
            mode = "in table body"
        elif name in ("td", "th"):
            mode = "in row"
        self.template_modes[-1] = mode
        self.mode = mode
        self.process(token)

    # --- insertion modes ---

    def _text_mode(self, token: Token) -> None:
        if token[0] == "text":
            self.insert_text(str(token[1]))
        elif token[0] == "end":
            self.stack.pop()
            self.mode = self.original_mode

    def _in_body(self, token: Token) -> None:
        kind = token[0]
        if kind == "text":
            text = str(token[1]).replace("\x00", "")
            if text:
                self.reconstruct_formatting()
                self.insert_text(text)
        elif kind == "comment":
            self.insert_comment(str(token[1]))
        elif kind == "start":
            self._start_in_body(str(token[1]), _attributes(token), bool(token[3]))
        elif kind == "end":
            self._end_in_body(str(token[1]))

    def _start_in_body(self, name: str, attributes: dict[str, str], self_closing: bool) -> None:
        if name in ("html", "body", "frameset", "head") or name in _TABLE_CONTEXT_IGNORED_IN_BODY:
            return
        if name == "template":
            self.start_template(attributes)
            return
        if name in _HEAD_IN_BODY:
            self.insert_element(name, attributes)
            if name in ("base", "basefont", "bgsound", "link", "meta"):
                self.stack.pop()
            else:
                self.switch_tokenizer(name)
            return
        if name in _CLOSES_P:
            self.close_p_in_button_scope()
            self.insert_element(name, attributes)
        elif name in _HEADINGS:
            self.close_p_in_button_scope()
            if self.current.is_html(*_HEADINGS):
                self.stack.pop()
            self.insert_element(name, attributes)
        elif name in ("pre", "listing"):
            self.close_p_in_button_scope()
            self.insert_element(name, attributes)
            self.skip_newline = True
        elif name == "form":
            in_template = self._in_template_contents()
            if self.form is not None and not in_template:
                return
            self.close_p_in_button_scope()
            form = self.insert_element(name, attributes)
            if not in_template:
                self.form = form
        elif name in ("li", "dd", "dt"):
            closes = ("li",) if name == "li" else ("dd", "dt")
            for node in reversed(self.stack):
                if node.is_html(*closes):
                    self.generate_implied_end_tags(node.name)
                    self.pop_until(node.name)
                    break
                if node.is_special() and not node.is_html("address", "div", "p"):
                    break
            self.close_p_in_button_scope()
            self.insert_element(name, attributes)
        elif name == "plaintext":
            self.close_p_in_button_scope()
            self.insert_element(name, attributes)
            self.switch_tokenizer(name)
        elif name == "button":
            if self.in_scope(("button",)):
                self.generate_implied_end_tags()
                self.pop_until("button")
            self.reconstruct_formatting()
            self.insert_element(name, attributes)
        elif name == "a":
            active = None
            for entry in reversed(self.formatting):
                if entry is _MARKER:
                    break
                if entry.name == "a":
                    active = entry
                    break
            if active is not None:
                self.adoption_agency("a")
                if active in self.formatting:
                    self.formatting.remove(active)
                if active in self.stack:
                    self.stack.remove(active)
            self.reconstruct_formatting()
            self.push_formatting(self.insert_element(name, attributes))
        elif name in _FORMATTING:
            self.reconstruct_formatting()
            if name == "nobr" and self.in_scope(("nobr",)):
                self.adoption_agency("nobr")
                self.reconstruct_formatting()
            self.push_formatting(self.insert_element(name, attributes))
        elif name in ("applet", "marquee", "object"):
            self.reconstruct_formatting()
            self.insert_element(name, attributes)
            self.formatting.append(_MARKER)
        elif name == "table":
            self.insert_element(name, attributes)
            self.mode = "in table"
        elif name in _VOID_IN_BODY or name in ("input", "param", "source", "track", "hr", "image"):
            if name == "hr":
                self.close_p_in_button_scope()
            elif name not in ("param", "source", "track"):
                self.reconstruct_formatting()
            self.insert_element("img" if name == "image" else name, attributes)
            self.stack.pop()
        elif name == "textarea":
            self.insert_element(name, attributes)
            self.skip_newline = True
            self.switch_tokenizer(name)
        elif name in ("xmp", "iframe", "noembed"):
            if name == "xmp":
                self.close_p_in_button_scope()
                self.reconstruct_formatting()
            self.insert_element(name, attributes)
            self.switch_tokenizer(name)
        elif name == "select":
            self.reconstruct_formatting()
            self.insert_element(name, attributes)
            in_table = self.mode in ("in table", "in caption", "in table body", "in row", "in cell")
            self.mode = "in select in table" if in_table else "in select"
        elif name in ("optgroup", "option"):
            if self.current.is_html("option"):
                self.stack.pop()
            self.reconstruct_formatting()
            self.insert_element(name, attributes)
        elif name in ("rb", "rtc", "rp", "rt"):
            if self.in_scope(("ruby",)):
                self.generate_implied_end_tags("rtc" if name in ("rp", "rt") else "")
            self.insert_element(name, attributes)
        elif name in ("math", "svg"):
            self.reconstruct_formatting()
            self.insert_element(name, attributes, foreign=name)
            if self_closing:
                self.stack.pop()
        else:
            self.reconstruct_formatting()
            self.insert_element(name, attributes)

    def _end_in_body(self, name: str) -> None:
        if name == "template":
            self.end_template()
            return
        if name in ("body", "html"):
            if self.in_scope(("body",)):
                self.mode = "after body"
            return
        if name in _BLOCK_END:
            if self.in_scope((name,)):
                self.generate_implied_end_tags()
                self.pop_until(name)
        elif name == "form":
            if self._in_template_contents():
                if self.in_scope(("form",)):
                    self.generate_implied_end_tags()
                    self.pop_until("form")
                return
            node, self.form = self.form, None
            if node is None or node not in self.stack or not self.in_scope(("form",)):
                return
            self.generate_implied_end_tags()
            self.stack.remove(node)
        elif name == "p":
            if not self.in_scope(("p",), _BUTTON_SCOPE):
                self.insert_element("p", {})
            self.close_p()
        elif name == "li":
            if self.in_scope(("li",), _LIST_SCOPE):
                self.generate_implied_end_tags("li")
                self.pop_until("li")
        elif name in ("dd", "dt"):
            if self.in_scope((name,)):
                self.generate_implied_end_tags(name)
                self.pop_until(name)
        elif name in _HEADINGS:
            if self.in_scope(_HEADINGS):
                self.generate_implied_end_tags()
                self.pop_until(*_HEADINGS)
        elif name in _FORMATTING:
            if not self.adoption_agency(name):
                self._any_other_end(name)
        elif name in ("applet", "marquee", "object"):
            if self.in_scope((name,)):
                self.generate_implied_end_tags()
                self.pop_until(name)
                self.clear_formatting_to_marker()
        elif name == "br":
            self._start_in_body("br", {}, False)
        else:
            self._any_other_end(name)

    def _in_foreign(self, token: Token) -> bool:
        """Foreign content's rules, whatever the insertion mode; ``False`` when the token is to be handled as HTML.

        As in the original's parser: a start tag or text under an integration point is HTML content; an end
        tag always goes through foreign content's end-tag rules.
        """
        kind = token[0]
        current = self.current
        if kind in ("start", "text") and _html_within(current, token):
            return False
        if kind == "text":
            self.insert_text(str(token[1]).replace("\x00", "\ufffd"))
            return True
        if kind == "comment":
            self.insert_comment(str(token[1]))
            return True
        if kind == "start":
            name, attributes = str(token[1]), _attributes(token)
            if name in _BREAKS_FOREIGN or (name == "font" and {"color", "face", "size"} & attributes.keys()):
                self.stack.pop()
                while self.current.foreign and not _integration_point(self.current):
                    self.stack.pop()
                return False
            self.insert_element(name, attributes, foreign="svg" if name == "svg" else current.foreign)
            if token[3]:
                self.stack.pop()
            return True
        if kind == "end":
            return self._end_in_foreign(str(token[1]))
        return kind == "doctype"

    def _end_in_foreign(self, name: str) -> bool:
        """Foreign content's end-tag rules (as the original's parser has them: ``</p>`` and ``</br>`` included);
        ``False`` when the tag is to be handled as HTML."""
        for index in range(len(self.stack) - 1, -1, -1):
            node = self.stack[index]
            if not node.foreign:
                return False
            if node.name == name:
                del self.stack[index:]
                return True
        return False

    def _any_other_end(self, name: str) -> None:
        for index in range(len(self.stack) - 1, -1, -1):
            node = self.stack[index]
            if node.is_html(name):
                self.generate_implied_end_tags(name)
                del self.stack[index:]
                return
            if node.is_special():
                return

    def _in_table(self, token: Token) -> None:
        kind = token[0]
        if kind == "text" and self.current.is_html(*_FOSTER_TARGETS):
            text = str(token[1]).replace("\x00", "")
            if text.strip("\t\n\f\r "):
                self.foster = True
                self._in_body(("text", text))
                self.foster = False
            else:
                self.insert_text(text)
            return
        if kind == "comment":
            self.insert_comment(str(token[1]))
            return
        name = str(token[1]) if kind in ("start", "end") else ""
        if kind == "end" and name == "template":
            self.end_template()
            return
        if kind == "start":
            if name == "caption":
                self._clear_to("table")
                self.formatting.append(_MARKER)
                self.insert_element(name, _attributes(token))
                self.mode = "in caption"
                return
            if name in ("colgroup", "col"):
                self._clear_to("table")
                self.insert_element("colgroup", {} if name == "col" else _attributes(token))
                self.mode = "in column group"
                if name == "col":
                    self.process(token)
                return
            if name in _TABLE_SECTIONS or name in ("td", "th", "tr"):
                self._clear_to("table")
                self.insert_element(
                    name if name in _TABLE_SECTIONS else "tbody", _attributes(token) if name in _TABLE_SECTIONS else {}
                )
                self.mode = "in table body"
                if name not in _TABLE_SECTIONS:
                    self.process(token)
                return
            if name == "table":
                if self.in_scope(("table",), _TABLE_SCOPE):
                    self.pop_until("table")
                    self.reset_mode()
                    self.process(token)
                return
            if name in ("style", "script", "template"):
                self._start_in_body(name, _attributes(token), False)
                return
            if name == "input" and _attributes(token).get("type", "").lower() == "hidden":
                self.insert_element(name, _attributes(token))
                self.stack.pop()
                return
            if name == "form":
                if self.form is None and not self._in_template_contents():
                    self.form = self.insert_element(name, _attributes(token))
                    self.stack.pop()
                return
        elif kind == "end":
            if name == "table":
                if self.in_scope(("table",), _TABLE_SCOPE):
                    self.pop_until("table")
                    self.reset_mode()
                return
            if name in ("body", "caption", "col", "colgroup", "html", "tbody", "td", "tfoot", "th", "thead", "tr"):
                return
        self.foster = True
        self._in_body(token)
        self.foster = False

    def _clear_to(self, *names: str) -> None:
        while not self.current.is_html(*names, "html", "template"):
            self.stack.pop()

    def _in_table_body(self, token: Token) -> None:
        kind, name = token[0], str(token[1]) if token[0] in ("start", "end") else ""
        if kind == "start" and name == "tr":
            self._clear_to(*_TABLE_SECTIONS)
            self.insert_element(name, _attributes(token))
            self.mode = "in row"
        elif kind == "start" and name in ("th", "td"):
            self._clear_to(*_TABLE_SECTIONS)
            self.insert_element("tr", {})
            self.mode = "in row"
            self.process(token)
        elif kind == "end" and name in _TABLE_SECTIONS:
            if self.in_scope((name,), _TABLE_SCOPE):
                self._clear_to(*_TABLE_SECTIONS)
                self.stack.pop()
                self.mode = "in table"
        elif (kind == "start" and name in ("caption", "col", "colgroup", "tbody", "tfoot", "thead")) or (
            kind == "end" and name == "table"
        ):
            if self.in_scope(_TABLE_SECTIONS, _TABLE_SCOPE):
                self._clear_to(*_TABLE_SECTIONS)
                self.stack.pop()
                self.mode = "in table"
                self.process(token)
        elif kind == "end" and name in ("body", "caption", "col", "colgroup", "html", "td", "th", "tr"):
            return
        else:
            self._in_table(token)

    def _in_row(self, token: Token) -> None:
        kind, name = token[0], str(token[1]) if token[0] in ("start", "end") else ""
        if kind == "start" and name in ("th", "td"):
            self._clear_to("tr")
            self.insert_element(name, _attributes(token))
            self.mode = "in cell"
            self.formatting.append(_MARKER)
        elif kind == "end" and name == "tr":
            if self.in_scope(("tr",), _TABLE_SCOPE):
                self._clear_to("tr")
                self.stack.pop()
                self.mode = "in table body"
        elif (kind == "start" and name in ("caption", "col", "colgroup", "tbody", "tfoot", "thead", "tr")) or (
            kind == "end" and name == "table"
        ):
            if self.in_scope(("tr",), _TABLE_SCOPE):
                self._clear_to("tr")
                self.stack.pop()
                self.mode = "in table body"
                self.process(token)
        elif kind == "end" and name in _TABLE_SECTIONS:
            if self.in_scope((name,), _TABLE_SCOPE) and self.in_scope(("tr",), _TABLE_SCOPE):
                self._clear_to("tr")
                self.stack.pop()
                self.mode = "in table body"
                self.process(token)
        elif kind == "end" and name in ("body", "caption", "col", "colgroup", "html", "td", "th"):
            return
        else:
            self._in_table(token)

    def _close_cell(self) -> None:
        self.generate_implied_end_tags()
        self.pop_until("td", "th")
        self.clear_formatting_to_marker()
        self.mode = "in row"

    def _in_cell(self, token: Token) -> None:
        kind, name = token[0], str(token[1]) if token[0] in ("start", "end") else ""
        if kind == "end" and name in ("td", "th"):
            if self.in_scope((name,), _TABLE_SCOPE):
                self._close_cell()
        elif kind == "start" and name in ("caption", "col", "colgroup", "tbody", "td", "tfoot", "th", "thead", "tr"):
            if self.in_scope(("td", "th"), _TABLE_SCOPE):
                self._close_cell()
                self.process(token)
        elif kind == "end" and name in ("body", "caption", "col", "colgroup", "html"):
            return
        elif kind == "end" and name in ("table", "tbody", "tfoot", "thead", "tr"):
            if self.in_scope((name,), _TABLE_SCOPE):
                self._close_cell()
                self.process(token)
        else:
            self._in_body(token)

    def _in_caption(self, token: Token) -> None:
        kind, name = token[0], str(token[1]) if token[0] in ("start", "end") else ""
        closing = (kind == "end" and name in ("caption", "table")) or (
            kind == "start" and name in ("caption", "col", "colgroup", "tbody", "td", "tfoot", "th", "thead", "tr")
        )
        if closing:
            if not self.in_scope(("caption",), _TABLE_SCOPE):
                return
            self.generate_implied_end_tags()
            self.pop_until("caption")
            self.clear_formatting_to_marker()
            self.mode = "in table"
            if name != "caption" or kind == "start":
                self.process(token)
        elif kind == "end" and name in ("body", "col", "colgroup", "html", "tbody", "td", "tfoot", "th", "thead", "tr"):
            return
        else:
            self._in_body(token)

    def _in_column_group(self, token: Token) -> None:
        kind, name = token[0], str(token[1]) if token[0] in ("start", "end") else ""
        if kind == "text":
            text = str(token[1])
            stripped = text.lstrip("\t\n\f\r ")
            self.insert_text(text[: len(text) - len(stripped)])
            if not stripped:
                return
            token = ("text", stripped)
        elif kind == "comment":
            self.insert_comment(str(token[1]))
            return
        elif kind == "start" and name == "col":
            self.insert_element(name, _attributes(token))
            self.stack.pop()
            return
        elif kind == "end" and name == "colgroup":
            if self.current.is_html("colgroup"):
                self.stack.pop()
                self.mode = "in table"
            return
        elif kind == "end" and name == "col":
            return
        elif kind == "start" and name == "template":
            self.start_template(_attributes(token))
            return
        elif kind == "end" and name == "template":
            self.end_template()
            return
        if self.current.is_html("colgroup"):
            self.stack.pop()
            self.mode = "in table"
            self.process(token)

    def _in_select(self, token: Token) -> None:
        kind, name = token[0], str(token[1]) if token[0] in ("start", "end") else ""
        if kind == "text":
            self.insert_text(str(token[1]).replace("\x00", ""))
        elif kind == "comment":
            self.insert_comment(str(token[1]))
        elif kind == "start" and name == "option":
            if self.current.is_html("option"):
                self.stack.pop()
            self.insert_element(name, _attributes(token))
        elif kind == "start" and name == "optgroup":
            if self.current.is_html("option"):
                self.stack.pop()
            if self.current.is_html("optgroup"):
                self.stack.pop()
            self.insert_element(name, _attributes(token))
        elif kind == "end" and name == "optgroup":
            if self.current.is_html("option") and len(self.stack) > 1 and self.stack[-2].is_html("optgroup"):
                self.stack.pop()
            if self.current.is_html("optgroup"):
                self.stack.pop()
        elif kind == "end" and name == "option":
            if self.current.is_html("option"):
                self.stack.pop()
        elif (kind == "end" and name == "select") or (kind == "start" and name == "select"):
            if self.in_select_scope("select"):
                self.pop_until("select")
                self.reset_mode()
        elif kind == "start" and name in ("input", "keygen", "textarea"):
            if self.in_select_scope("select"):
                self.pop_until("select")
                self.reset_mode()
                self.process(token)
        elif kind == "start" and name in ("script", "template"):
            self._start_in_body(name, _attributes(token), False)
        elif kind == "end" and name == "template":
            self.end_template()

    def _in_select_in_table(self, token: Token) -> None:
        kind, name = token[0], str(token[1]) if token[0] in ("start", "end") else ""
        table_names = ("caption", "table", "tbody", "tfoot", "thead", "tr", "td", "th")
        if kind == "start" and name in table_names:
            self.pop_until("select")
            self.reset_mode()
            self.process(token)
        elif kind == "end" and name in table_names:
            if self.in_scope((name,), _TABLE_SCOPE):
                self.pop_until("select")
                self.reset_mode()
                self.process(token)
        else:
            self._in_select(token)

    def _after_body(self, token: Token) -> None:
        if token[0] == "text" and not str(token[1]).strip("\t\n\f\r "):
            self._in_body(token)
        elif token[0] == "comment":
            self.insert_comment(str(token[1]), self.html)
        elif token[0] == "doctype" or (token[0] == "end" and token[1] == "html"):
            return
        else:
            self.mode = "in body"
            self.process(token)

    def reset_mode(self) -> None:
        for index in range(len(self.stack) - 1, -1, -1):
            node = self.stack[index]
            last = index == 0
            if node.is_html("select"):
                in_table = any(ancestor.is_html("table") for ancestor in self.stack[:index])
                self.mode = "in select in table" if in_table else "in select"
                return
            if node.is_html("td", "th") and not last:
                self.mode = "in cell"
                return
            if node.is_html("template"):
                self.mode = self.template_modes[-1] if self.template_modes else "in body"
                return
            mode = {
                "tr": "in row",
                "tbody": "in table body",
                "thead": "in table body",
                "tfoot": "in table body",
                "caption": "in caption",
                "colgroup": "in column group",
                "table": "in table",
                "body": "in body",
            }.get(node.name if not node.foreign else "")
            if mode is not None:
                self.mode = mode
                return
        self.mode = "in body"


_MATHML_TEXT_POINTS: Final = frozenset({"mi", "mo", "mn", "ms", "mtext"})
_SVG_HTML_POINTS: Final = frozenset({"foreignobject", "desc", "title"})


def _integration_point(node: Node) -> bool:
    """A MathML text integration point or an HTML integration point."""
    if node.foreign == "math":
        if node.name in _MATHML_TEXT_POINTS:
            return True
        encoding = node.attributes.get("encoding", "").lower()
        return node.name == "annotation-xml" and encoding in ("text/html", "application/xhtml+xml")
    return node.foreign == "svg" and node.name in _SVG_HTML_POINTS


def _html_within(node: Node, token: Token) -> bool:
    """Whether ``token`` (a start tag or text), met with ``node`` as the current node, is HTML content."""
    if node.foreign == "math" and node.name in _MATHML_TEXT_POINTS:
        return token[0] == "text" or token[1] not in ("mglyph", "malignmark")
    if token[0] == "start" and token[1] == "svg" and node.foreign == "math" and node.name == "annotation-xml":
        return True
    return _integration_point(node)


_IMPLIED_END_THOROUGHLY: Final = _IMPLIED_END | {"caption", "colgroup", "tbody", "td", "tfoot", "th", "thead", "tr"}


def _contents(node: Node) -> Node:
    """Where children of ``node`` go: a template's contents, else the node itself."""
    return node.content if node.content is not None else node


def _attributes(token: Token) -> dict[str, str]:
    attributes = token[2]
    assert isinstance(attributes, dict)
    return attributes


def parse_document(source: str) -> Node:
    """The document tree of ``source``, parsed as a whole HTML document."""
    return _Builder(source).run()


# --- serialization (the fragment serializing algorithm) -----------------------------------------------------

_VOID: Final = _names(
    "area base basefont bgsound br col embed frame hr img input keygen link meta param source track wbr"
)
_RAW_TEXT_PARENTS: Final = _names("style script xmp iframe noembed noframes plaintext")


def _escape(text: str, *, attribute: bool) -> str:
    text = text.replace("&", "&amp;").replace("\u00a0", "&nbsp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace('"', "&quot;") if attribute else text


def outer_html(node: Node, *, inert: bool = False) -> str:
    """``node.outerHTML``, as the original's DOM serializes it (``inert``: inside a template's contents, an inert
    document where scripting is disabled)."""
    parts: list[str] = []
    stack: list[tuple[Node | str, bool, bool]] = [(node, False, inert)]
    while stack:
        current, closing, inside = stack.pop()
        if isinstance(current, str):
            parts.append(current)
            continue
        if closing:
            parts.append(f"</{current.name}>")
            continue
        if current.kind == TEXT:
            parent = current.parent
            raw = parent is not None and (
                parent.is_html(*_RAW_TEXT_PARENTS) or (parent.is_html("noscript") and not inside)
            )
            parts.append(current.data if raw else _escape(current.data, attribute=False))
        elif current.kind == COMMENT:
            parts.append("<!--" + _escape_comment(current.data) + "-->")
        elif current.kind == ELEMENT:
            attributes = "".join(
                f' {name}="{_escape(value, attribute=True)}"' for name, value in current.attributes.items()
            )
            parts.append(f"<{current.name}{attributes}>")
            if current.foreign or current.name not in _VOID:
                stack.append((current, True, inside))
                children_inside = inside or current.content is not None
                if current.name in _RAW_TEXT_PARENTS:
                    # The serializer escapes the "<" of the element's own closing tag inside its content.
                    content = "".join(outer_html(child, inert=children_inside) for child in current.children())
                    stack.append((_escape_closing_tag(content, current.name), False, inside))
                else:
                    children = reversed(list(_contents(current).children()))
                    stack.extend((child, False, children_inside) for child in children)
    return "".join(parts)


def _escape_closing_tag(text: str, name: str) -> str:
    lowered, prefix = text.translate(_ASCII_LOWER), "</" + name
    out, index = [], 0
    while True:
        found = lowered.find(prefix, index)
        if found < 0:
            out.append(text[index:])
            return "".join(out)
        out.append(text[index:found] + "&lt;")
        index = found + 1


_ASCII_LOWER: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _escape_comment(data: str) -> str:
    return data.replace("--!>", "--!&gt;").replace("-->", "--&gt;")
