"""What Spark and Kubernetes are, as facts the core, the emulator and the simulator share.

Labels and container names, Spark's exit codes, kubectl's printPod rules (RESTARTS, STATUS),
times and kubectl's AGE, the label selector grammar, clocks. No dependencies beyond Python:
every layer imports it, it imports none.
"""
