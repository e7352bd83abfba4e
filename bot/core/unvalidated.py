"""Making pydantic model instances without validation, for the core's hot path.

``Quest.evolve`` and ``Snapshot.of`` build instances from values that are typed already (they
come from a validated quest or event), so validation would only repeat itself. Pydantic's
``model_construct`` does this generically and slowly; these are the four slots it sets on every
instance, with their own setters (what ``object.__setattr__`` would call, minus its look-up).
"""

from __future__ import annotations

from pydantic import BaseModel

new = object.__new__
set_dict, set_fields_set, set_extra, set_private = (
    BaseModel.__dict__[name].__set__
    for name in ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__",
                 "__pydantic_private__")
)
