"""Lathe fixture generator.

Produces `.pt2` archives in the layout written by PyTorch 2.9's
``torch.export.save`` (PT2 archive, schema 8, raw weight payloads), using
only the PyTorch 1.13 that Debian ships:

* ``trace``      -- ATen-level capture (make_fx over a functionalized call with
                    parameters, buffers and constants lifted to inputs).
* ``serialize``  -- traced FX graph -> export-schema JSON.
* ``treespec``   -- pytree spec strings (``treespec_dumps`` protocol 1).
* ``archive``    -- the PT2 container (PyTorch's own zip writer).
* ``models``     -- the fixture models.
* ``reference``  -- eager reference numbers (.npy sidecars).

Run ``/usr/bin/python3 tools/make_fixtures.py --out fixtures``.
"""
