"""View name -> its widget class, imported when first needed."""

from __future__ import annotations

import importlib
from typing import Any

from lab.tui.views.base import LabView

MODULES = {
    "cluster": ("lab.tui.views.cluster", "ClusterView"),
    "group": ("lab.tui.views.group", "GroupView"),
    "assignors": ("lab.tui.views.assignors", "AssignorsView"),
    "purgatory": ("lab.tui.views.purgatory", "PurgatoryView"),
    "scenario": ("lab.tui.views.scenario", "ScenarioView"),
    "backend": ("lab.tui.views.backend", "BackendView"),
    "spark": ("lab.tui.views.spark", "SparkView"),
}


def make_view(name: str, env: Any = None, **kwargs: Any) -> LabView:
    module, cls = MODULES[name]
    view_class: type[LabView] = getattr(importlib.import_module(module), cls)
    return view_class(env, **kwargs)
