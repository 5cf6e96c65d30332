"""Settings every test run shares, from whichever folder it starts (`make test`, `make unit`)."""

from hypothesis import settings

# No per-example deadline: on CI's two shared cores one example of a property test can take a
# second, and a deadline would fail it for the machine's load, not for the property.
settings.register_profile("shared-machine", deadline=None)
settings.load_profile("shared-machine")
