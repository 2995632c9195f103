"""The bundled world: a seeded, documented simulation of the study in the authors' layout.

``simulate_world(DEFAULT_PARAMETERS)`` builds it, ``write_world(world, path)`` writes it
(``recenter simulate --out data/raw/bundled``). Everything in it is simulated and named so
(``sim-human-..``, ``sim-llm-..``, users ``sim-wc-..``); see ``data/raw/bundled/README.md``.

A tool, not the data layer: the workflow reads only the written files (through
``analysis.data``), and no part of the analysis imports this package (``.importlinter``).
"""

from analysis.simulation.parameters import DEFAULT_PARAMETERS, WorldParameters
from analysis.simulation.simulate import simulate_world
from analysis.simulation.write import write_world

__all__ = ["DEFAULT_PARAMETERS", "WorldParameters", "simulate_world", "write_world"]
