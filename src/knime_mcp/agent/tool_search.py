"""The index behind the agent's tool search: BM25 (``bm25s``) over what each tool says about itself.

Layer: core (agent), below :mod:`knime_mcp.agent.tool_offer`, which offers the model a search tool over the tools
table when the table is larger than the tool budget. Each tool is one document: its model-facing name (split into
words at ``_``, ``-``, ``.`` and camelCase humps, and given twice, since a name says most about a tool), its title and
description, its server's name, and what its parameter schema says: the names, descriptions and allowed values
(``enum``, ``const``) of its parameters at any depth up to :data:`SCHEMA_DEPTH`, through arrays' items,
``anyOf``/``oneOf``/``allOf`` and the local ``$ref``\\s they use (each definition once; definitions no parameter uses
stay out). Every word is indexed twice, as itself and as its English (Snowball) stem, as Lucene's keyword-repeat
does: "repositories" finds "repository", while a word used as the query spells it still scores higher than its
relatives (stemming alone let frequent stems such as "project" or "run" crowd out rarer exact words). English stop
words are left out; the ranking is bm25s's, no scorer of our own. bm25s has no incremental add, so
:meth:`ToolIndex.update` rebuilds, and only when the tool set changed: 10,000 tools index in about two seconds.

    index = ToolIndex([("create_issue", tool), ...])
    hits = index.search("open a bug report on the repository")
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from knime_mcp.calls.dispatch import LocalTool
from knime_mcp.tools.tool import MCPTool

__all__ = ["DEFAULT_RESULTS", "SCHEMA_DEPTH", "SearchHit", "ToolIndex", "tool_text"]

DEFAULT_RESULTS = 8
"""Matches one search returns: a line each for the model to choose among (about 150 bytes), and each tool found is
offered in full from then on. Eight rather than five find the tool for one task in 14 to 23 more (benchmarks/README.md,
figure 9), for about 2 KB more per model turn."""

SCHEMA_DEPTH = 4
"""How deeply nested parameters are still read: objects inside objects deeper than this rarely say what a tool does."""

_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[_.\-/:]+")
_IDENTIFIER = re.compile(r"\w+")
_TOKEN = re.compile(r"\w\w+")
"""A word as bm25s's default splitter finds it: two or more word characters."""
_STEM_MARK = "~"
"""Prefix of a stem's token, so that a stem never counts as the word it is spelled like."""
_INNER = frozenset({"items", "additionalProperties"})
_ALTERNATIVES = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_READ = frozenset({"description", "properties", "enum", "const", "$ref", *_INNER, *_ALTERNATIVES})
"""The keys of a schema the index reads."""


class SearchHit(NamedTuple):
    """One match of a search: the tool's model-facing name, the tool, and its BM25 score (above 0)."""

    name: str
    tool: MCPTool | LocalTool
    score: float


def _words(text: str) -> str:
    """``getIssue_comments-v2`` as ``getIssue get Issue comments v2``: identifiers split into the words they are made
    of, a word with capitals inside kept whole as well, since it may be a name (``GitHub``, ``SQLite``)."""
    separated = _SEPARATORS.sub(" ", text)
    return _IDENTIFIER.sub(_humps, separated) if _HUMP.search(separated) else separated


def _humps(word: re.Match[str]) -> str:
    parts = _HUMP.sub(" ", word[0])
    return word[0] if parts == word[0] else f"{word[0]} {parts}"


def _schema_text(schema: object, root: Mapping[str, Any], depth: int, expanded: set[str], texts: list[str]) -> None:
    """Add to ``texts`` what one (sub)schema says: its description and allowed values, its properties' names and
    schemas, the schemas it is made of (items, alternatives), and the local definitions it refers to, each expanded
    once per tool. The schema's keys are walked rather than looked up: most schemas have few, and order does not
    matter to BM25."""
    if not isinstance(schema, dict) or depth > SCHEMA_DEPTH:  # dict, not Mapping: JSON's, and a faster check
        return
    for key, value in schema.items():
        if key not in _READ:
            continue
        if key == "description" and isinstance(value, str):
            texts.append(value)
        elif key == "properties" and isinstance(value, dict):
            for name, prop in value.items():
                texts.append(_words(str(name)))
                _schema_text(prop, root, depth + 1, expanded, texts)
        elif key in _INNER:
            _schema_text(value, root, depth, expanded, texts)
        elif key in _ALTERNATIVES and isinstance(value, list):
            for choice in value:
                _schema_text(choice, root, depth, expanded, texts)
        elif key == "enum" and isinstance(value, list):
            texts += (_words(choice) for choice in value if isinstance(choice, str))
        elif key == "const" and isinstance(value, str):
            texts.append(_words(value))
        elif key == "$ref" and isinstance(value, str) and value.startswith("#/") and value not in expanded:
            expanded.add(value)
            _schema_text(_resolve(root, value), root, depth, expanded, texts)


def _resolve(root: Mapping[str, Any], ref: str) -> object:
    """What a local ``$ref`` (``#/$defs/name``) points at in ``root``; None where nothing is."""
    found: object = root
    for part in ref[2:].split("/"):
        found = found.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(found, Mapping) else None
    return found


def tool_text(name: str, tool: MCPTool | LocalTool) -> str:
    """What the index knows of one tool (see the module docstring)."""
    words = _words(name)
    texts = [words, words, tool.description]
    if isinstance(tool, MCPTool):
        texts += [tool.title or "", _words(tool.tool_name), tool.server.display_name]
    schema = tool.parameter_schema or {}
    _schema_text(schema, schema, 0, set(), texts)
    return "\n".join(text for text in texts if text)


class _Vocabulary:
    """Token ids for texts: each word but stop words, then its stem marked as such (:data:`_STEM_MARK`). Its own
    rather than bm25s's tokenizer, which would take each word through a Python loop twice."""

    def __init__(self) -> None:
        import snowballstemmer
        from bm25s.stopwords import STOPWORDS_EN

        self._stem = snowballstemmer.stemmer("english").stemWord
        self._tokens: dict[str, int] = {}
        self._words: dict[str, tuple[int, ...]] = dict.fromkeys(STOPWORDS_EN, ())
        """The ids of each word seen in the tools and of its stem (none for a stop word): the Snowball stemmer is
        pure Python, so each word is stemmed once."""

    def _token(self, token: str) -> int:
        return self._tokens.setdefault(token, len(self._tokens))

    def document(self, text: str) -> list[int]:
        """The ids of a tool's text, adding its new words and stems to the vocabulary."""
        words = _TOKEN.findall(text.lower())
        known = self._words
        for word in set(words).difference(known):
            known[word] = (self._token(word), self._token(_STEM_MARK + self._stem(word)))
        return [token for word in words for token in known[word]]

    def query(self, text: str) -> list[int]:
        """The ids of a query's words and stems that the tools have: a word they lack may share their stem."""
        ids: list[int] = []
        for word in _TOKEN.findall(text.lower()):
            if (known := self._words.get(word)) is not None:
                ids += known
            elif (stem := self._tokens.get(_STEM_MARK + self._stem(word))) is not None:
                ids.append(stem)
        return ids


class ToolIndex:
    """A BM25 index over tools under their model-facing names; rebuilt by :meth:`update` when the tools change."""

    def __init__(self, tools: Iterable[tuple[str, MCPTool | LocalTool]]) -> None:
        self._entries: list[tuple[str, MCPTool | LocalTool]] = []
        self._retriever: Any = None
        self._vocabulary = _Vocabulary()
        self.update(tools)

    def __len__(self) -> int:
        return len(self._entries)

    def update(self, tools: Iterable[tuple[str, MCPTool | LocalTool]]) -> None:
        """Index ``tools`` instead, after a server changed its tools; nothing to do when they are the same."""
        entries = list(tools)
        if self._retriever is not None and _same(entries, self._entries):
            return
        import bm25s

        self._entries = entries
        self._vocabulary = _Vocabulary()
        ids = [self._vocabulary.document(tool_text(name, tool)) for name, tool in entries]
        self._retriever = bm25s.BM25()
        if ids:  # bm25s cannot index nothing; a search of no tools finds nothing without it
            self._retriever.index(ids, show_progress=False)

    def search(self, query: str, limit: int = DEFAULT_RESULTS) -> list[SearchHit]:
        """The tools that match ``query`` best, best first; only those with a score above 0 (a word in common)."""
        ids = self._vocabulary.query(_words(query)) if self._entries and limit > 0 else []
        if not ids:
            return []
        documents, scores = self._retriever.retrieve([ids], k=min(limit, len(self._entries)), show_progress=False)
        hits = []
        for document, score in zip(documents[0], scores[0], strict=True):
            if score > 0:
                name, tool = self._entries[int(document)]
                hits.append(SearchHit(name, tool, float(score)))
        return hits


def _same(new: list[tuple[str, MCPTool | LocalTool]], old: list[tuple[str, MCPTool | LocalTool]]) -> bool:
    """Whether two tool lists index alike: the same names for the same tools (equal, not only identical)."""
    return len(new) == len(old) and all(a[0] == b[0] and a[1] == b[1] for a, b in zip(new, old, strict=True))
