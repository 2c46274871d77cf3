"""The non-value keys of a plan's run environment (schedule.Plan.run_arrays).

A plan runs its steps over one dict: value ids (ints) map to arrays, and these string keys
carry what the steps of one call share.
"""

# Whether this run may use the buffers steps kept from the last run (False while another run
# of the same plan is under way: a second thread, or a hook calling the same function).
REUSE = "reuse"
# The ids of the captured inputs whose storage steps may write in place on this run
# (in_place.InPlaceTargets.allowed), and the list of those written so far.
IN_PLACE = "in_place"
WRITTEN = "written"
# The program.Recording of this run, when the plan records it for its native program.
RECORD = "record"
# The status word of a CUDA plan's run: kernels that check set it (cuda/plan.py).
STATUS = "status"
# The background calls a run has begun and not finished yet (overlap.py): id(result value) ->
# (registry.Background, handle).
PENDING = "pending"
