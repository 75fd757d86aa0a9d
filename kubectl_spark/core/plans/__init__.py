"""Action plans: what ``fence``, ``unfence``, ``force-kill``, ``resubmit`` and ctrl+d would do.

(ctrl+d: the TUI's delete of one executor's pod.)

A plan is an ordered list of API operations, each pinned to what was observed (a pod's UID, a
Lease's resourceVersion) and each with a one-line reason; or a refusal; or a no-op when the
action already took effect. Plans are pure: the gateway checks permissions and applies them
step by step, ``--dry-run`` prints them. One module per action; ``base`` holds what they share.
"""

from .base import Operation, Plan
from .delete_pod import delete_pod_plan
from .fence import fence_plan, unfence_plan
from .force_kill import KillContext, force_kill_plan
from .resubmit import resubmit_plan, with_prefix

__all__ = [
    "KillContext",
    "Operation",
    "Plan",
    "delete_pod_plan",
    "fence_plan",
    "force_kill_plan",
    "resubmit_plan",
    "unfence_plan",
    "with_prefix",
]
