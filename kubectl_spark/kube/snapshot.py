"""Reading what the core needs, in one paged LIST per resource.

Pods are required; the rest degrades, and says so: a list refused (forbidden) is named in the
snapshot, and the analysis notes what it could not know (without nodes, a lost node is told
only by its pods' Events); without the spark-operator CRD there are no SparkApplications. A
forbidden pod list is an error naming the verb and the resource.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from kubectl_spark import errors
from kubectl_spark.core import raw, slim
from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.core.node import nodes_of
from kubectl_spark.core.pod import Pod
from kubectl_spark.core.podfacts import PodFacts, facts

from . import lazy_kubernetes, resources
from .background import in_background
from .client import Api
from .sparkapi import ViewReads


def _path(group: str, version: str, plural: str, namespace: str | None) -> str:
    base = f"/api/{version}" if not group else f"/apis/{group}/{version}"
    return f"{base}/namespaces/{namespace}/{plural}" if namespace else f"{base}/{plural}"


def check_credentials(api: Api, namespace: str | None) -> None:
    """List one pod, the read every view needs, before any optional lookup.

    Credentials the API server rejects (401) are then named by that read ("list pods in NS"),
    not by whichever lookup (the history scope, the recorder's Service) came first. A 403
    passes: the watches say what they may not read, and the rest is still shown.
    """
    where = f"in {namespace}" if namespace else "in all namespaces"
    path = f"/api/v1/namespaces/{namespace}/pods" if namespace else "/api/v1/pods"
    try:
        api.request("GET", path, query=[("limit", 1)], what=f"list pods {where}")
    except errors.Forbidden:
        return


def check_namespace(api: Api, namespace: str) -> None:
    """kube-apiserver lists an unknown namespace as empty; kubectl spark says it does not exist."""
    try:
        api.request("GET", f"/api/v1/namespaces/{namespace}", what=f"get namespace {namespace}")
    except errors.NotFound as exc:
        raise errors.NotFound(
            f'namespace "{namespace}" not found', status=404, reason="NotFound"
        ) from exc
    except errors.Forbidden:
        return  # may list pods there without reading the namespace object


MAX_OWNER_READS = 50
_POD_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")  # a DNS subdomain


def missing_owners(pods: Sequence[Pod], skip: set[str]) -> dict[tuple[str, str], str]:
    """(namespace, name) -> uid of the pods executors name as owner that ``pods`` lacks.

    A client-mode driver in a pod of its own (a notebook) carries no spark-role label, yet its
    executors name it (spark.kubernetes.driver.pod.name). Usually there are none.
    """
    owners = _owners(pods)
    return _not_listed(owners, _uids(pods) | skip) if owners else {}


def _owners(pods: Sequence[Pod]) -> dict[tuple[str, str, str], None]:
    """(namespace, name, uid) of each pod named as owner, once, in the pods' order.

    A hundred executors name one driver.
    """
    owners: dict[tuple[str, str, str], None] = {}
    for pod in pods:
        owner = _pod_owner(pod)
        if owner is not None:
            owners[owner] = None
    return owners


def _not_listed(
    owners: dict[tuple[str, str, str], None], listed: set[str]
) -> dict[tuple[str, str], str]:
    wanted: dict[tuple[str, str], str] = {}
    for namespace, name, uid in owners:
        if uid not in listed:
            wanted.setdefault((namespace, name), uid)
    return wanted


@dataclass
class PodIndex:
    """What reading looks for among the pods, gathered page by page as each page comes.

    At 50,000 pods a scan of the whole list costs 40-70 ms, most of it waiting on memory (a
    pod's dicts lie spread over 200 MiB); a page just decoded is still in the cache. The
    answers are the whole-list scans' (``missing_owners``; the driver pods ``running_drivers``
    starts from), and a list started again (410) starts the index again. Each pod's facts
    (``Snapshot.pod_facts``) are read here too, while the next page is on its way.
    """

    uids: set[str] = field(default_factory=set)
    owners: dict[tuple[str, str, str], None] = field(default_factory=dict)
    drivers: list[Pod] = field(default_factory=list)  # pods labelled spark-role=driver
    facts: list[PodFacts] = field(default_factory=list)  # in the order of the pods kept

    def clear(self) -> None:
        self.uids.clear()
        self.owners.clear()
        self.drivers.clear()
        self.facts.clear()

    def add(self, page: list[Pod]) -> None:
        """One page's pods, each read once, through its facts.

        What ``missing_owners`` and the pods labelled spark-role=driver find.
        """
        for pod in page:
            f = facts(pod)
            self.facts.append(f)
            self.uids.add(f.uid)
            if f.owner_kind == "Pod":
                self.owners[(f.namespace, f.owner_name, f.owner_uid)] = None
            if f.role == "driver" and not f.cluster_member:
                self.drivers.append(pod)

    def missing_owners(self, skip: set[str]) -> dict[tuple[str, str], str]:
        """``missing_owners`` of the pods listed."""
        return _not_listed(self.owners, self.uids | skip) if self.owners else {}


@dataclass(frozen=True)
class OwnersToRead:
    """What one look of ``PodOwners`` takes from the watched pods, under their owner's lock."""

    order: list[str]  # every watched pod's uid, in the pods' order
    changed: dict[str, Pod | None]  # uid -> the pod now, None when it is gone
    everything: bool  # the pods were listed again: every owner is read anew


class PodOwners:
    """``missing_owners`` of a watch's pods, each pod's owner read again only when it changed.

    The TUI asks every ten seconds; reading every pod's owner again each time held the
    interpreter for 52 ms at 50,000 pods (with an in-line twin of ``_pod_owner``; 102 ms
    without it), while the screen waited; now 17 ms with 20 pods changed. Pods are told by
    uid (the watch's keys, which are their ``raw.uid``); the answer is the whole-list scan's,
    pods' order included (a test holds the two to each other over any run of changes). The
    changed uids are bounded: the poll, which runs as long as the watches, takes them.
    """

    def __init__(self) -> None:
        self._owner_of: dict[str, tuple[str, str, str]] = {}
        self._changed: set[str] | None = None  # None: the pods were listed (again)

    def changed(self, uid: str) -> None:
        """The pod ``uid`` came, changed or went (under the lock that guards the pods)."""
        if self._changed is not None:
            self._changed.add(uid)

    def listed(self) -> None:
        """The pods were listed again: every one may have changed (under the same lock)."""
        self._changed = None

    def take(self, pods: dict[str, Pod]) -> OwnersToRead:
        """What changed since the last look (under the same lock); ``missing`` reads it outside."""
        changed, self._changed = self._changed, set()
        if changed is None:
            return OwnersToRead(list(pods), dict(pods), True)
        return OwnersToRead(list(pods), {uid: pods.get(uid) for uid in changed}, False)

    def missing(self, taken: OwnersToRead, skip: set[str]) -> dict[tuple[str, str], str]:
        """``missing_owners`` of the pods ``taken`` saw (one reader at a time)."""
        if taken.everything:
            self._owner_of.clear()
        for uid, pod in taken.changed.items():
            owner = None if pod is None else _pod_owner(pod)
            if owner is None:
                self._owner_of.pop(uid, None)
            else:
                self._owner_of[uid] = owner
        # in the pods' order, each once (C-level: 50,000 pods in a few milliseconds)
        owners = dict.fromkeys(filter(None, map(self._owner_of.get, taken.order)))
        return _not_listed(owners, set(taken.order) | skip) if owners else {}


def _pod_owner(pod: Pod) -> tuple[str, str, str] | None:
    """(namespace, name, uid) of the pod a pod names as its controller, if a pod does."""
    ref = pod.controller()
    if ref is None or ref.kind != "Pod":
        return None
    return pod.metadata.namespace, ref.name, ref.uid


def _uids(pods: Sequence[Pod]) -> set[str]:
    return {pod.metadata.uid for pod in pods}


def read_owners(
    api: Api, wanted: dict[tuple[str, str], str], gone: set[str] | None = None
) -> list[dict[str, Any]]:
    """Read ``missing_owners`` by name; without them, their executors would look orphaned.

    A deleted driver answers 404 and is left out. ``gone`` collects such uids, so that a
    watcher asks once about each: a pod never comes back under the same uid.
    """
    found = []
    for (namespace, name), uid in list(wanted.items())[:MAX_OWNER_READS]:
        if not (_POD_NAME.fullmatch(namespace) and _POD_NAME.fullmatch(name)):
            continue  # cluster data: never let a name shape the request's path
        try:
            owner = api.request(
                "GET", _path("", "v1", f"pods/{name}", namespace), what=f"get pod {name}"
            )
        except errors.NotFound:
            if gone is not None:
                gone.add(uid)
            continue
        except errors.Forbidden:
            continue
        if raw.uid(owner) == uid:  # the same pod, not a new one under the name
            found.append(owner)  # whole: a plan may act on it
        elif gone is not None:
            gone.add(uid)  # the name now holds another pod: the named one is gone
    return found


def _list_served(api: Api, resource: resources.Resource, namespace: str | None) -> list[object]:
    """A resource's items at the first of its versions served; none where no CRD serves it."""
    for base in resource.bases:
        path = resources.Resource(resource.key, base, resource.plural, resource.namespaced)
        try:
            items, _ = api.list(path.path(namespace), what=f"list {resource.plural}")
        except errors.NotFound:
            continue  # e.g. no spark-operator CRD, or not at this version
        return list(nodes_of(items)) if resource is resources.NODES else items
    return []


def _list_allowed(
    api: Api, resource: resources.Resource, namespace: str | None
) -> list[object] | None:
    """``_list_served``; None when the list is refused (forbidden)."""
    try:
        return _list_served(api, resource, namespace)
    except errors.Forbidden:
        return None


# Lists in flight at once. The optional ones are independent of the pods and of each other:
# asked together, a command waits about one round trip for them instead of one each (nine on
# ``ls``: most of its time against a distant API server, benchmarks/interactive.py --latency).
READERS = 4


def read(
    api: Api, namespace: str | None, *, selector: str | None = None, slim_pods: bool = False
) -> Snapshot:
    """``read_indexed``'s snapshot."""
    return read_indexed(api, namespace, selector=selector, slim_pods=slim_pods)[0]


def _indexed_telling(index: PodIndex, spark: ViewReads, page: list[Any]) -> None:
    """``index.add``, and the page's drivers told to ``spark``."""
    known = len(index.drivers)
    index.add(page)
    spark.drivers_listed(index.drivers[known:])


def read_indexed(
    api: Api,
    namespace: str | None,
    *,
    selector: str | None = None,
    slim_pods: bool = False,
    spark: ViewReads | None = None,
    limit: int = 500,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[Snapshot, PodIndex | None]:
    """Everything the core reads, in one paged LIST per resource.

    The pods are typed as each page comes (``core.pod``); without ``slim_pods`` each pod's
    JSON is kept too (``Snapshot.pod_objects``), for the plans, which copy or patch whole
    objects; with it, a page is typed straight from its bytes (``core.slim.pod_page``). The
    optional lists are read beside the pods' pages, on a few threads, once the first page has
    come (until then, a server that is not there or refuses the credentials is told by one
    request, as before); one after the other with ``KUBECTL_SPARK_EAGER_KUBERNETES``, the fast
    paths off (a test compares the two). With it, the pods' index (``PodIndex``); None with
    the fast paths off, where each scan reads the whole list as before. ``spark`` is told of
    each page's drivers, of the nodes as they come, and of each page the list waited for longer
    than it took to keep the one before, to ask the drivers' Spark UIs while the list waits on
    the server (not with the fast paths off), timed by ``clock``. ``limit``: pods a page.
    """
    where = f"in namespace {namespace}" if namespace else "in all namespaces"
    spark_selector = "spark-role" + (f",{selector}" if selector else "")
    if namespace:
        check_namespace(api, namespace)  # an unknown namespace is said before anything is read
    calls: dict[str, Callable[[], Any]] = {
        r.key: partial(_list_allowed, api, r, namespace) for r in resources.OPTIONAL
    }
    listing: dict[str, Future[list[object] | None]] = {}

    serial = bool(os.environ.get(lazy_kubernetes.EAGER))  # one after the other, as before
    index = None if serial else PodIndex()

    def read_the_others() -> None:
        """Once the server has answered the first page: it is there and takes the credentials."""
        if index is not None:
            index.clear()  # the first page, or the first again (a list started over)
        if not listing:  # once, though a list started again calls it again
            listing.update(in_background(calls, READERS))
            if spark is not None and "nodes" in listing:
                listing["nodes"].add_done_callback(spark.nodes_listed)

    each_page: Callable[[list[Any]], None] | None = None  # the fast paths off: none
    if index is not None:
        each_page = index.add if spark is None else partial(_indexed_telling, index, spark)
    objects: dict[str, dict[str, Any]] = {}  # the pods' JSON by uid, for plans (not slim)
    pods, pods_rv = api.list(
        resources.PODS.path(namespace),
        label_selector=spark_selector,
        what=f"list pods {where}",
        keep=slim.pod if slim_pods else partial(_typed_keeping, objects),
        keep_page=partial(slim.pod_page, shared={}) if slim_pods else None,
        after_first_page=None if serial else read_the_others,
        each_page=each_page,
        server_behind=None if index is None or spark is None else spark.list_waited,
        limit=limit,
        clock=clock,
    )
    wanted = missing_owners(pods, set()) if index is None else index.missing_owners(set())
    owner_objects = read_owners(api, wanted)
    owners = [_typed_keeping(objects, o) for o in owner_objects]
    listed = (
        {key: future.result() for key, future in listing.items()}
        if listing
        else {key: call() for key, call in calls.items()}
    )
    optional = {"owners": owners} | {key: found or [] for key, found in listed.items()}
    # said in the analysis: what it could not know
    unreadable = [key for key, found in listed.items() if found is None]
    snapshot = Snapshot.of(
        {**optional, "pods": pods},
        now=api.now(),  # the cluster's clock: ages and windows as kubectl reads them
        pods_resource_version=pods_rv,
        unreadable=unreadable,
        pod_facts=() if index is None else index.facts,
        pod_objects=objects,
    )
    return snapshot, index


def _typed_keeping(objects: dict[str, dict[str, Any]], obj: object) -> Pod:
    """A pod typed as the core reads it; its JSON kept in ``objects`` by uid, for plans."""
    pod = slim.pod(obj)
    if isinstance(obj, dict) and pod.metadata.uid:
        objects[pod.metadata.uid] = obj
    return pod
