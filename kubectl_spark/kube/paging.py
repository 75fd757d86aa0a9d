"""One paged LIST read through, page after page, as one consistent snapshot.

``Api.list`` starts it again when a continue token expires (410); here are the checks that
keep a misbehaving server from mixing snapshots or paging for ever, and the two ways a page
becomes what the caller holds: ``keep_page`` from its bytes at once (``core.slim.pod_page``),
else parsed whole and ``keep`` item by item.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubectl_spark import errors

from . import answers

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

    def _kept_page(self, data: bytes) -> KeptPage | None:
        doc = self.keep_page(data) if self.keep_page is not None else None
        deep = answers.free_form(self.path)
        if doc is None or any(answers.unusable(i, deep=deep) for i in doc["items"]):
            return None  # parsed whole, and each item's trouble told as before
        return KeptPage(doc)

    def read(self, api: Api) -> tuple[list[Any], str]:
        """(items, resourceVersion) of every page, or an error naming what went wrong."""
        what, free_form = self.what, answers.free_form(self.path)
        decode = self._kept_page if self.keep_page is not None else None
        items: list[Any] = []
        uids: set[str] = set()
        token = ""
        rv = ""
        empty = 0  # pages in a row with no item and a continue token
        for _ in range(answers.MAX_PAGES):
            query: list[tuple[str, Any]] = [("limit", self.limit)]
            if self.label_selector:
                query.append(("labelSelector", self.label_selector))
            if self.field_selector:
                query.append(("fieldSelector", self.field_selector))
            if token:
                query.append(("continue", token))
            answer = api.request("GET", self.path, query=query, what=what, decode=decode)
            already = isinstance(answer, KeptPage)
            page, meta = answers.page_of(answer.doc if already else answer, what)
            if self.after_first_page is not None and not token:
                self.after_first_page()
            kept: list[Any] = []
            for item in page:
                problem = "" if already else answers.unusable(item, deep=free_form)
                if problem:
                    api.note(f"{what}: set aside {answers.named(item)}: {problem}")
                    continue
                uid = item["metadata"]["uid"]
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
            rv = rv or str(meta.get("resourceVersion") or "")
            next_token = str(meta.get("continue") or "")
            if not next_token:
                return items, rv
            if next_token == token:
                raise errors.ServerError(
                    f"{what}: the server answered the same continue token again", status=0
                )
            empty = 0 if page else empty + 1
            if empty >= answers.EMPTY_PAGES:
                raise errors.ServerError(
                    f"{what}: {answers.EMPTY_PAGES} empty pages in a row, each with a continue token: "
                    "stopped reading",
                    status=0,
                )
            token = next_token
        raise errors.ServerError(
            f"{what}: more than {answers.MAX_PAGES} pages of {self.limit}: stopped reading",
            status=0,
        )
