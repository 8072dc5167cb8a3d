"""Benchmark 12's baseline: the service as shipped, but its receipts left unsigned (the same
payload, no Ed25519 signature), so the benchmark measures what signing adds to an action."""

from service.app import create_app


class _Unsigned:
    """A signer that signs nothing: the receipt's payload as it is."""

    def sign(self, obj: dict) -> dict:
        return dict(obj)


app = create_app()
app.extensions["games"].receipts.keys = _Unsigned()
