"""The simulator: control-plane components and Spark itself, on an injectable clock.

It changes the cluster only through the emulator's HTTP API, so every state it produces is one a
real client can observe; it keeps in memory only what a real cluster keeps outside the API
(running processes, what a kubelet knows, what a Spark driver knows).
"""
