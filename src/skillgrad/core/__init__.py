"""The bottom layer: small pure helpers every other package may import (it imports none of them)."""
