"""Built-in synthetic chest-radiograph phantoms (the embedded default's data)."""

from medeval.synthetic.phantoms import SUBCONCEPTS, make_phantoms

__all__ = ["SUBCONCEPTS", "make_phantoms"]
