"""The embedded cluster: an in-process Kubernetes API emulator (and, later, its simulator).

It imports none of the plugin's own layers, so it can be reasoned about (and replaced by a real
cluster) on its own.
"""
