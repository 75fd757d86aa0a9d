"""The one gateway to a cluster: the only package that imports ``kubernetes``."""
