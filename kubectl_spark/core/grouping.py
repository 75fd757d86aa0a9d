"""Which pods make up which application, and which executors belong to which driver attempt.

Applications (``domain.md`` "Vocabulary"): the spark-operator label
``sparkoperator.k8s.io/app-name``, else the Apache operator's ``spark.operator/spark-app-name``,
else the owning driver Job, else ``spark-app-selector``
(``--group-by LABEL`` overrides). Attempts are driver pods numbered by creation time. Executors
go to the attempt whose driver pod UID is their controller owner, else whose submission-id they
carry, else the attempt of their app id that was current when they were created. Pods with a
``spark-role`` that fit nowhere are kept aside (ungrouped), never dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kubectl_spark.knowledge.labels import APACHE_CLUSTER, RESUBMITTED_FROM, ROLE
from kubectl_spark.knowledge.operator_names import app_id_of

from . import raw
from .apache import spans
from .model import Reason, UngroupedPod
from .pod import Pod
from .podfacts import PodFacts, facts
from .raw import RawObject


@dataclass
class AttemptGroup:
    driver: PodFacts | None  # None: the driver pod is gone (reconstructed)
    uid: str | None
    name: str | None
    created: str | None
    submission: str = ""
    executors: list[PodFacts] = field(default_factory=list)
    note: str = ""
    ended: str | None = None  # a reconstructed attempt's end, when Events tell it
    outside: bool = False  # no driver pod and executors that name no owner: client mode
    # A gone attempt's end as its owner recorded it (the Apache operator's status): its reason.
    told: Reason | None = None


APACHE = "apache-operator"  # the source of an application the Apache operator runs
NO_PLACE = "no driver owner, no spark-app-selector and no spark-operator label"
CLUSTER = "spark-cluster"  # the source of a SparkCluster of the Apache operator (master, workers)

OUTSIDE_NOTE = (
    "no driver pod, and its executors name no owner: the driver runs outside the cluster "
    "(Spark's client mode) or in a pod without the spark-role=driver label"
)


@dataclass
class AppGroup:
    key: tuple[str, str, str]
    namespace: str
    name: str
    app_id: str
    source: str
    owner: RawObject | None = None  # the Job or SparkApplication (the newest Job)
    attempts: list[AttemptGroup] = field(default_factory=list)
    jobs: list[RawObject] = field(default_factory=list)  # every driver Job, resubmits too
    # The Apache operator's SparkApplications of this application, oldest first: the first and
    # the copies ``resubmit`` made of it (each names the one it copies); ``owner`` is the newest.
    chain: list[RawObject] = field(default_factory=list)

    def terminating(self, uid: str | None) -> bool:
        """Whether the attempt's driver pod has been deleted and is still there."""
        return any(
            a.uid == uid and a.driver is not None and a.driver.pod.metadata.deletion_timestamp
            for a in self.attempts
        )


def _facts(pods: Sequence[Pod], known: Sequence[PodFacts]) -> list[PodFacts]:
    """Each pod's facts: those a gateway read of this very pod at its place, else read now."""
    read = []
    for place, pod in enumerate(pods):
        found = known[place] if place < len(known) else None
        read.append(found if found is not None and found.pod is pod else facts(pod))
    return read


def _created(f: PodFacts) -> tuple[str, str]:
    return (f.created, f.name)


def group(
    pods: Sequence[Pod],
    jobs: Sequence[object],
    sparkapps: Sequence[object],
    *,
    group_by: str | None = None,
    owners: Sequence[Pod] = (),
    apacheapps: Sequence[object] = (),
    sparkclusters: Sequence[object] = (),
    known: Sequence[PodFacts] = (),
) -> tuple[list[AppGroup], list[UngroupedPod]]:
    """Applications and their attempts from the pods; ``known``: ``Snapshot.pod_facts``."""
    read = _facts(pods, known)
    drivers = [f for f in read if f.role == "driver"]
    # An empty spark-role still marks a Spark pod (kept, shown as ungrouped if nothing places it).
    executors = [
        f for f in read if f.role != "driver" and (f.role or ROLE in f.pod.metadata.labels)
    ]
    drivers += _client_mode_drivers(owners, executors)
    drivers.sort(key=_created)
    grouper = _Grouper(jobs, sparkapps, group_by, apacheapps, sparkclusters)
    driver_attempt = grouper.place_drivers(drivers)
    grouper.place_executors(executors, driver_attempt)
    grouper.add_apps_without_pods()
    groups = grouper.groups
    if group_by:
        _join_owners(groups)
    _name_shared_labels(groups)
    for g in groups.values():
        g.attempts.sort(key=lambda a: (a.created or "", a.name or ""))
    return sorted(groups.values(), key=lambda g: (g.namespace, g.name, g.key)), grouper.ungrouped


def _label_key(f: PodFacts, chosen: str) -> tuple[str, str, str]:
    """The application of a pod under ``--group-by``: its label's value, and its Spark name.

    A label two unrelated applications share (a team, a pipeline) does not make them attempts
    of one: their drivers would read as a split brain. Attempts of one application share its
    name (spark.app.name, the ``spark-app-name`` label) even when their app ids differ.
    """
    natural = f.app_name or f.operator_app or f.app_id
    return ("label", f.namespace, f"{chosen}\0{natural}")


def _join_owners(groups: dict[tuple[str, str, str], AppGroup]) -> None:
    """Under ``--group-by``, what launched an application joins the row of its labelled pods.

    The driver pods carry the label, but their Job (or SparkApplication) does not, nor do the
    attempts only it remembers (pods gone): grouped apart, they made a second row of the same
    application (issue 48). A group that is not the label's joins the one label group of its
    namespace with its Spark name (or app id); with none, or two (the label changed between
    attempts: which one would be a guess), it stays a row of its own.
    """
    labelled: dict[tuple[str, str], list[AppGroup]] = {}
    for key, g in groups.items():
        if key[0] == "label":
            natural = key[2].split("\0", 1)[1]
            labelled.setdefault((g.namespace, natural), []).append(g)
    for key, g in list(groups.items()):
        if key[0] == "label":
            continue
        found = labelled.get((g.namespace, g.name)) or labelled.get((g.namespace, g.app_id)) or []
        if len(found) != 1:
            continue
        (target,) = found
        target.attempts += g.attempts
        target.jobs += [j for j in g.jobs if all(j is not k for k in target.jobs)]
        if g.owner is not None:
            target.owner = _newest(target.owner, g.owner) if g.source == "job" else g.owner
            target.source = g.source
        target.chain = target.chain or g.chain
        target.app_id = target.app_id or g.app_id
        del groups[key]


def _name_shared_labels(groups: dict[tuple[str, str, str], AppGroup]) -> None:
    """Name ``--group-by`` applications: the label's value, or ``VALUE:NAME`` when shared.

    Applications with different Spark names may share a value; each then says which it is.
    """
    by_value: dict[tuple[str, str], list[AppGroup]] = {}
    for key, g in groups.items():
        if key[0] == "label":
            by_value.setdefault((key[1], g.name), []).append(g)
    for shared in by_value.values():
        if len(shared) > 1:
            for g in shared:
                g.name = f"{g.name}:{g.key[2].split(chr(0), 1)[1] or '?'}"


class _Grouper:
    """The applications found so far, and the rules that place a pod in one."""

    def __init__(
        self,
        jobs: Sequence[object],
        sparkapps: Sequence[object],
        group_by: str | None,
        apacheapps: Sequence[object] = (),
        sparkclusters: Sequence[object] = (),
    ) -> None:
        self.clusters_by_name = {
            (raw.namespace(c), raw.name(c)): c for c in raw.objects(sparkclusters) if raw.name(c)
        }
        self.groups: dict[tuple[str, str, str], AppGroup] = {}
        self.apache_by_name = {
            (raw.namespace(a), raw.name(a)): a for a in raw.objects(apacheapps) if raw.name(a)
        }
        # The copy of each (namespace, name) resubmit made, and each chain once found: asked
        # for every pod, so never a scan of all SparkApplications per pod.
        self.apache_copies = {
            (ns, raw.label(a, RESUBMITTED_FROM)): a
            for (ns, _), a in self.apache_by_name.items()
            if raw.label(a, RESUBMITTED_FROM)
        }
        self.apache_chains: dict[tuple[str, str], list[RawObject]] = {}
        self.ungrouped: list[UngroupedPod] = []
        self.jobs = raw.objects(jobs)
        self.jobs_by_uid = {raw.uid(j): j for j in self.jobs if raw.uid(j)}
        self.apps_by_name = {
            (raw.namespace(a), raw.name(a)): a for a in raw.objects(sparkapps) if raw.name(a)
        }
        self.group_by = group_by
        self.jobs_by_name = {(raw.namespace(j), raw.name(j)): j for j in self.jobs if raw.name(j)}

    def apache_chain(self, namespace: str, name: str) -> list[RawObject]:
        """The SparkApplications from the first to every copy of it ``resubmit`` made."""
        found = self.apache_chains.get((namespace, name))
        if found is None:
            found = self.apache_chains[(namespace, name)] = self._apache_chain(namespace, name)
        return found

    def _apache_chain(self, namespace: str, name: str) -> list[RawObject]:
        app = self.apache_by_name.get((namespace, name))
        if app is None:
            return []
        seen = {raw.uid(app)}
        while (source := raw.label(app, RESUBMITTED_FROM)) and (
            older := self.apache_by_name.get((namespace, source))
        ) is not None:
            if raw.uid(older) in seen:
                break
            seen.add(raw.uid(older))
            app = older
        chain = [app]
        while (
            following := self.apache_copies.get((namespace, raw.name(chain[-1])))
        ) is not None and raw.uid(following) not in {raw.uid(c) for c in chain}:
            chain.append(following)
        return chain

    def root_job(self, job: RawObject) -> RawObject:
        """The first driver Job of a chain of resubmits (each labels the one it copies).

        ``kubectl spark resubmit`` makes a new Job from the old one's template; its attempts
        continue the same application, so ``ls`` shows one row and ``history`` one timeline.
        """
        seen = {raw.uid(job)}
        while (source := raw.label(job, RESUBMITTED_FROM)) and (
            older := self.jobs_by_name.get((raw.namespace(job), source))
        ) is not None:
            if raw.uid(older) in seen:
                break
            seen.add(raw.uid(older))
            job = older
        return job

    def app_group(
        self,
        key: tuple[str, str, str],
        name: str,
        app_id: str,
        source: str,
        owner: RawObject | None,
    ) -> AppGroup:
        found = self.groups.get(key)
        if found is None:
            found = self.groups[key] = AppGroup(key, key[1], name, app_id, source, owner)
        return found

    def by_labels(self, f: PodFacts, job_uid: str | None) -> AppGroup | None:
        """The application a pod's labels (or its driver Job) put it in, by the rules' order."""
        ns = f.namespace
        chosen = f.label(self.group_by) if self.group_by else ""
        if chosen:
            return self.app_group(_label_key(f, chosen), chosen, f.app_id, "pod", None)
        cluster = f.label(APACHE_CLUSTER) if f.cluster_member else ""
        if cluster:
            owner = self.clusters_by_name.get((ns, cluster))
            return self.app_group((CLUSTER, ns, cluster), cluster, "", CLUSTER, owner)
        if f.operator_app:
            name = f.operator_app
            owner = self.apps_by_name.get((ns, name))
            key = ("sparkapplication", ns, name)
            return self.app_group(key, name, f.app_id, "sparkapplication", owner)
        if f.apache_app:
            # Each attempt has an app id of its own (<name>-<attemptId>): the label, not the
            # app id, is the application, so two attempts alive are one app's split brain.
            chain = self.apache_chain(ns, f.apache_app)
            name = raw.name(chain[0]) if chain else f.apache_app
            found = self.app_group(
                ("apache-operator", ns, name), name, f.app_id, APACHE, chain[-1] if chain else None
            )
            found.chain = chain
            return found
        if job_uid is not None:
            job = self.jobs_by_uid.get(job_uid)
            root = self.root_job(job) if job is not None else None
            key = ("job", ns, raw.uid(root) if root is not None else job_uid)
            name = f.app_name or (raw.name(root) if root is not None else f.owner_name)
            found = self.app_group(key, name, f.app_id, "job", job)
            found.owner = _newest(found.owner, job)
            if job is not None and all(j is not job for j in found.jobs):
                found.jobs.append(job)
            return found
        if f.app_id:
            name = f.app_name or f.app_id
            return self.app_group(("pod", ns, f.app_id), name, f.app_id, "pod", None)
        return None

    def place_drivers(self, drivers: list[PodFacts]) -> dict[str, tuple[AppGroup, AttemptGroup]]:
        driver_attempt: dict[str, tuple[AppGroup, AttemptGroup]] = {}
        by_name: dict[tuple[str, str], AppGroup] = {}
        for f in drivers:  # oldest first: a copy comes after the pod it copies
            source = f.label(RESUBMITTED_FROM) if f.owner_kind != "Job" else ""
            copied = by_name.get((f.namespace, source)) if source else None
            # A resubmitted copy of a driver pod has an app id of its own (resubmit gives it
            # one) and continues the application of the pod it copies.
            g = copied or self.by_labels(f, f.owner_uid if f.owner_kind == "Job" else None)
            if g is None:
                why = "no spark-app-selector label, no spark-operator label and no owning Job"
                self.ungrouped.append(UngroupedPod(f.namespace, f.name, f.uid, "driver", why))
                continue
            g.app_id = f.app_id if copied is not None and f.app_id else g.app_id or f.app_id
            attempt = AttemptGroup(f, f.uid, f.name, f.created or None, f.submission)
            g.attempts.append(attempt)
            driver_attempt[f.uid] = (g, attempt)
            by_name[(f.namespace, f.name)] = g
        return driver_attempt

    def _with_its_driver(self, f: PodFacts, placed: tuple[AppGroup, AttemptGroup] | None) -> bool:
        """Whether an executor goes with the driver that owns it (not another --group-by value)."""
        if placed is None:
            return False
        chosen = f.label(self.group_by) if self.group_by else ""
        return not (chosen and placed[0].key != _label_key(f, chosen))

    def place_executors(
        self, executors: list[PodFacts], driver_attempt: dict[str, tuple[AppGroup, AttemptGroup]]
    ) -> None:
        # Executors whose driver is gone are placed by time (the attempt current when they were
        # created), so only they need sorting.
        homeless: list[PodFacts] = []
        for f in executors:
            owner_uid = f.owner_uid if f.owner_kind == "Pod" else ""
            placed = driver_attempt.get(owner_uid) if owner_uid else None
            if placed is not None and self._with_its_driver(f, placed):
                placed[1].executors.append(f)
            else:
                homeless.append(f)
        # The first application of each (namespace, app id), kept current as groups are added,
        # so that placing an executor whose driver is gone is a lookup, not a scan.
        first_by_app_id: dict[tuple[str, str], AppGroup] = {}
        for g in self.groups.values():
            first_by_app_id.setdefault((g.namespace, g.app_id), g)
        for f in sorted(homeless, key=_created):
            if f.cluster_member:
                target = self.by_labels(f, None)
                if target is not None and target.attempts:
                    target.attempts[-1].executors.append(f)  # the master now serving them
                    continue
            owner_uid = f.owner_uid if f.owner_kind == "Pod" else ""
            target = _fallback_group(
                self.groups, first_by_app_id, f, self.group_by
            ) or self.by_labels(f, None)
            if target is None:
                self.ungrouped.append(UngroupedPod(f.namespace, f.name, f.uid, f.role, NO_PLACE))
                continue
            first_by_app_id.setdefault((target.namespace, target.app_id), target)
            _attach_executor(target, owner_uid, f.owner_name if owner_uid else "", f)

    def add_apps_without_pods(self) -> None:
        """SparkApplications and driver Jobs with no pod left are applications still."""
        for (ns, name), cluster in self.clusters_by_name.items():
            key = (CLUSTER, ns, name)
            if key not in self.groups:
                self.groups[key] = AppGroup(key, ns, name, "", CLUSTER, cluster)
        for ns, app_name in self.apache_by_name:
            chain = self.apache_chain(ns, app_name)
            root = raw.name(chain[0])
            key = ("apache-operator", ns, root)
            if key not in self.groups:
                first = spans(chain[0])
                app_id = app_id_of(ns, root, first[0].attempt_id if first else 0)
                self.groups[key] = AppGroup(key, ns, root, app_id, APACHE, chain[-1], chain=chain)
        for (ns, app_name), app in self.apps_by_name.items():
            key = ("sparkapplication", ns, app_name)
            if key not in self.groups:
                app_id = raw.text(app, "status", "sparkApplicationId")
                self.groups[key] = AppGroup(key, ns, app_name, app_id, "sparkapplication", app)
        for job in self.jobs:
            template_labels = raw.mapping(job, "spec", "template", "metadata", "labels")
            key = ("job", raw.namespace(job), raw.uid(self.root_job(job)))
            if key in self.groups:
                found = self.groups[key]
                found.owner = _newest(found.owner, job)
                if all(j is not job for j in found.jobs):
                    found.jobs.append(job)
                continue
            if template_labels.get("spark-role") == "driver":
                self.groups[key] = AppGroup(
                    key,
                    raw.namespace(job),
                    str(template_labels.get("spark-app-name") or raw.name(job)),
                    str(template_labels.get("spark-app-selector", "")),
                    "job",
                    job,
                    jobs=[job],
                )


def _newest(held: RawObject | None, job: RawObject | None) -> RawObject | None:
    """The later of two driver Jobs of one application: the one whose attempts run now."""
    if held is None or job is None:
        return held or job
    return (
        job
        if raw.text(job, "metadata", "creationTimestamp")
        > raw.text(held, "metadata", "creationTimestamp")
        else held
    )


def _client_mode_drivers(owners: Sequence[Pod], executors: list[PodFacts]) -> list[PodFacts]:
    """Unlabelled pods that executors name as their owner: client-mode drivers in a pod.

    Spark labels no driver it did not create; its executors still name the pod given in
    spark.kubernetes.driver.pod.name as owner. Such a pod is the attempt's driver, with the
    application id and name its executors carry.
    """
    if not owners:
        return []  # the usual case: no executor's owner is missing from the list
    naming = {f.owner_uid: f for f in executors if f.owner_kind == "Pod" and f.owner_uid}
    found = []
    for pod in owners:
        driver = facts(pod)
        executor = naming.get(driver.uid)
        if executor is None or driver.role:
            continue
        driver.role, driver.app_id, driver.app_name = "driver", executor.app_id, executor.app_name
        found.append(driver)
    return found


def _fallback_group(
    groups: dict[tuple[str, str, str], AppGroup],
    first_by_app_id: dict[tuple[str, str], AppGroup],
    f: PodFacts,
    group_by: str | None,
) -> AppGroup | None:
    """An existing application for an executor whose driver pod is not in the cluster."""
    ns = f.namespace
    chosen = f.label(group_by) if group_by else ""
    if chosen:
        return groups.get(_label_key(f, chosen))
    if f.operator_app:
        return groups.get(("sparkapplication", ns, f.operator_app))
    if f.apache_app:
        return groups.get(("apache-operator", ns, f.apache_app))
    if not f.app_id:
        return None
    return first_by_app_id.get((ns, f.app_id))


def _attach_executor(target: AppGroup, owner_uid: str, owner_name: str, f: PodFacts) -> None:
    """Place an executor whose driver pod is not (or no longer) in the cluster."""
    submission = f.submission
    if submission:
        for attempt in target.attempts:
            if attempt.submission == submission:
                attempt.executors.append(f)
                return
    if owner_uid:
        for attempt in target.attempts:
            if attempt.uid == owner_uid:
                attempt.executors.append(f)
                return
    created = f.created
    ownerless = not owner_uid and not submission
    live = [a for a in target.attempts if a.driver is not None and (a.created or "") <= created]
    if live and ownerless:
        live[-1].executors.append(f)  # by app id and time window
        return
    if ownerless:
        # An app id is one driver JVM's: every executor that names no owner has the same driver.
        for attempt in target.attempts:
            if attempt.outside:
                attempt.executors.append(f)
                return
    # The driver pod is gone (or was never one): reconstruct the attempt from the executor.
    attempt = AttemptGroup(
        None,
        owner_uid or None,
        owner_name or None,
        created or None,
        submission,
        note=OUTSIDE_NOTE if ownerless else "its driver pod is no longer in the cluster",
        outside=ownerless,
    )
    attempt.executors.append(f)
    target.attempts.append(attempt)
