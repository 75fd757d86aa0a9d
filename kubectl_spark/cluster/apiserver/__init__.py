"""The Kubernetes API emulator: object store and API rules, served over HTTPS by aiohttp."""
