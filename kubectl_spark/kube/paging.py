"""One paged LIST read through, page after page, as one consistent snapshot.

``Api.list`` starts it again when a continue token expires (410); here are the checks that
keep a misbehaving server from mixing snapshots or paging for ever, and the two ways a page
becomes what the caller holds: ``keep_page`` from its bytes at once (``core.slim.pod_page``),
else parsed whole and ``keep`` item by item.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import msgspec

from kubectl_spark import errors

from . import answers
from .background import in_background

if TYPE_CHECKING:
    from .client import Api


@dataclass(frozen=True)
class KeptPage:
    """A list answer whose items ``keep_page`` already made what the caller holds."""

    doc: dict[str, Any]


@dataclass(frozen=True)
class Listing:
    path: str
    label_selector: str | None
    field_selector: str | None
    limit: int
    what: str
    keep: Callable[[dict[str, Any]], Any] | None
    keep_page: Callable[[bytes], dict[str, Any] | None] | None
    after_first_page: Callable[[], None] | None
    each_page: Callable[[list[Any]], None] | None = None
    # Called after a page the client waited for longer than it took to keep the one before:
    # the server is what the list waits on, and the caller's own reads cost it nothing then
    # (``sparkapi.ViewReads``). Where keeping a page takes longer, they would take turns with
    # the keeping on the interpreter.
    server_behind: Callable[[], None] | None = None
    # What the list's waits and keeping are timed by: a test drives it, so that which page the
    # list waited on does not depend on how busy the machine is.
    clock: Callable[[], float] = time.monotonic

    def _kept_page(self, data: bytes) -> KeptPage | None:
        doc = self.keep_page(data) if self.keep_page is not None else None
        deep = answers.free_form(self.path)
        if doc is None or any(answers.unusable(i, deep=deep) for i in doc["items"]):
            return None  # parsed whole, and each item's trouble told as before
        return KeptPage(doc)

    def _query(self, token: str) -> list[tuple[str, Any]]:
        query: list[tuple[str, Any]] = [("limit", self.limit)]
        if self.label_selector:
            query.append(("labelSelector", self.label_selector))
        if self.field_selector:
            query.append(("fieldSelector", self.field_selector))
        if token:
            query.append(("continue", token))
        return query

    def _ask(self, api: Api, token: str) -> Any:
        """One page: its bytes as they came when the caller keeps pages from their bytes."""
        return api.request(
            "GET",
            self.path,
            query=self._query(token),
            what=self.what,
            decode=_Bytes if self.keep_page is not None else None,
        )

    def _ask_next(self, api: Api, token: str, asked: int) -> Future[Any] | None:
        if asked >= answers.MAX_PAGES:
            return None  # the loop stops before it would read it
        return in_background({"page": partial(self._ask, api, token)}, 1)["page"]

    def _answer(
        self, api: Api, coming: Future[Any] | None, token: str, kept_in: float
    ) -> tuple[Any, float]:
        """This page's answer (asked for while the last was kept, else now), and when it came."""
        if coming is None:
            return self._ask(api, token), self.clock()
        asked = self.clock()
        answer = coming.result()
        came = self.clock()
        if self.server_behind is not None and came - asked > kept_in:
            self.server_behind()
        return answer, came

    def read(self, api: Api) -> tuple[list[Any], str]:
        """(items, resourceVersion) of every page, or an error naming what went wrong.

        The next page is asked for as soon as this one's continue token is known, on a thread
        of its own, while this one is decoded and kept: the server makes the next page while
        the client works on this one (with the pods' facts read page by page, ``ls -A`` at
        10,000 pods went from 0.42 to 0.36 s in one process; docs/performance.md). A page kept
        from its bytes tells its token before it is decoded (``_continue_of``). The requests
        are still one after the other, each after the check that its token is not the one
        before.
        """
        what, free_form = self.what, answers.free_form(self.path)
        items: list[Any] = []
        uids: set[str] = set()
        token = ""
        rv = ""
        empty = 0  # pages in a row with no item and a continue token
        coming: Future[Any] | None = None
        early = ""  # the token ``coming`` asks with
        kept_in = 0.0  # seconds the last page took to keep, from its answer
        for asked in range(1, answers.MAX_PAGES + 1):
            answer, came = self._answer(api, coming, token, kept_in)
            coming = None
            if isinstance(answer, _Bytes):
                early = _continue_of(answer.data)
                if early and early != token:
                    coming = self._ask_next(api, early, asked)
                answer = self._kept_page(answer.data) or answers.parse(answer.data)
            already = isinstance(answer, KeptPage)
            page, meta = answers.page_of(answer.doc if already else answer, what)
            if self.after_first_page is not None and not token:
                self.after_first_page()
            rv = rv or str(meta.get("resourceVersion") or "")
            next_token = str(meta.get("continue") or "")
            if next_token != early:
                coming = None  # asked with another token than the page says: not used
            if next_token:
                if next_token == token:
                    raise errors.ServerError(
                        f"{what}: the server answered the same continue token again", status=0
                    )
                empty = 0 if page else empty + 1
                if empty >= answers.EMPTY_PAGES:
                    raise errors.ServerError(
                        f"{what}: {answers.EMPTY_PAGES} empty pages in a row, each with a "
                        "continue token: stopped reading",
                        status=0,
                    )
                if coming is None:
                    coming = self._ask_next(api, next_token, asked)
            kept: list[Any] = []
            for item in page:
                problem = "" if already else answers.unusable(item, deep=free_form)
                if problem:
                    api.note(f"{what}: set aside {answers.named(item)}: {problem}")
                    continue
                uid = answers.uid_of(item)
                if uid in uids:
                    # One snapshot never lists an object twice: the pages are not one list.
                    raise errors.ServerError(
                        f"{what}: the server's pages repeat {answers.named(item)} "
                        "(its continue tokens do not page through one list)",
                        status=0,
                    )
                uids.add(uid)
                kept.append(self.keep(item) if self.keep and not already else item)
            items.extend(kept)
            if self.each_page is not None:
                self.each_page(kept)
            kept_in = self.clock() - came
            if not next_token:
                return items, rv
            token = next_token
        raise errors.ServerError(
            f"{what}: more than {answers.MAX_PAGES} pages of {self.limit}: stopped reading",
            status=0,
        )


@dataclass(frozen=True)
class _Bytes:
    """A page's answer as it came, decoded by the listing itself."""

    data: bytes


class _ListHead(msgspec.Struct):
    metadata: dict[str, object] | None = None


# Reads the list's metadata and skips its items without building them (about 0.6 ms for a
# page of 500 pods, a sixth of decoding it slim).
_HEAD = msgspec.json.Decoder(_ListHead)
# Where a list's items begin. The API server writes a list's metadata before its items (Go's
# encoding/json keeps the fields' order: metav1.ListMeta before Items in every *List type of
# k8s.io/api), so the head before them is a few hundred bytes.
_ITEMS = b'"items"'
_HEAD_BYTES = 4096


def _continue_of(data: bytes) -> str:
    """A list answer's continue token, read before its items are decoded.

    "" when there is none, or the answer is not a list as expected: the page's own decoding
    then tells, and a token it does not confirm is not used. Read from the head before the
    items when that is JSON on its own (the items skipped cost a page of 500 pods 0.6 ms), else
    from the whole answer.
    """
    cut = data.find(_ITEMS, 0, _HEAD_BYTES)
    head = data[:cut].rstrip() if cut > 0 else b""
    if head.endswith(b","):  # "items" a key of the answer itself: its head closed is JSON
        metadata = _metadata_of(head[:-1] + b"}")
        if metadata is not None:
            return _token_in(metadata)
    return _token_in(_metadata_of(data) or {})


def _metadata_of(data: bytes) -> dict[str, object] | None:
    try:
        return _HEAD.decode(data).metadata
    except (msgspec.DecodeError, RecursionError):
        return None


def _token_in(metadata: dict[str, object]) -> str:
    token = metadata.get("continue")
    return token if isinstance(token, str) else ""
