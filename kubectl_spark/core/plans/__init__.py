"""Action plans: what ``fence``, ``unfence``, ``force-kill`` and ``resubmit`` would do.

A plan is an ordered list of API operations, each pinned to what was observed (a pod's UID, a
Lease's resourceVersion) and each with a one-line reason; or a refusal; or a no-op when the
action already took effect. Plans are pure: the gateway checks permissions and applies them
step by step, ``--dry-run`` prints them. One module per action; ``base`` holds what they share.
"""

from .base import Operation, Plan
from .fence import fence_plan, unfence_plan
from .force_kill import KillContext, force_kill_plan
from .resubmit import resubmit_plan, with_prefix

__all__ = [
    "KillContext",
    "Operation",
    "Plan",
    "fence_plan",
    "force_kill_plan",
    "resubmit_plan",
    "unfence_plan",
    "with_prefix",
]
