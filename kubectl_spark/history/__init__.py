"""The local history store: what `kubectl spark record` saw, kept after the cluster forgets it."""
