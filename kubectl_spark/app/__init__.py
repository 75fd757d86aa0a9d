"""The application layer: what every front end does, written once.

Load a cluster view (``view``), find what the user named (``find``), summarize and present the
one analysis (``summary``, ``present``, ``describe``, ``advice``, ``events``), and plan an action
(``act``). The CLI and the TUI only parse input and draw what this layer hands them; neither
imports the other.
"""
