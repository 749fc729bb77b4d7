"""Answer: one GetBestConfig answer with convenient attributes; `.response` is the message."""

import collections

Geometry = collections.namedtuple("Geometry", "grid block dynamic_shared_bytes")


class Answer:
    """The best known configuration for one problem, from the daemon or offline from a table.

    `rung` says how good the match is ("exact", "predicted", "nearest_shape",
    "same_architecture", "family_default"); `stale` lists provenance that differs (empty: none).
    Time figures were measured at `tuned_shape`, which is the asked shape only when
    `measured_at_asked_shape`; `predicted_time_us` and `expected_slowdown` are set for
    "predicted", and for "same_architecture" when another GPU model's prediction model chose it
    (then they are that model's, `device_model`). `launch` is the LaunchContract message: what
    to pass and set to launch `kernel`.
    """

    __slots__ = ("response", "offline", "_protos")

    def __init__(self, response, *, offline, protos):
        self.response = response
        self.offline = offline  # True: answered from a table file through the CLI
        self._protos = protos

    @property
    def family(self):
        return self.response.problem.family

    @property
    def shape(self):
        return tuple(self.response.problem.shape)

    @property
    def dtype(self):
        return self.response.problem.dtype

    @property
    def rung(self):
        r = self.response
        return self._protos.enum_label(r.DESCRIPTOR.enum_types_by_name["Rung"], r.rung, "RUNG_")

    @property
    def params(self):
        return dict(sorted(self.response.params.items()))

    @property
    def compile_options(self):
        return list(self.response.compile_options)

    @property
    def geometry(self):
        g = self.response.geometry
        return Geometry(tuple(g.grid), tuple(g.block), g.dynamic_shared_bytes)

    @property
    def launch(self):
        return self.response.launch

    @property
    def concurrency(self):
        """"any", or "one_module_per_stream" (launches of one loaded module must not overlap)."""
        c = self.response.launch
        return self._protos.enum_label(c.DESCRIPTOR.enum_types_by_name["Concurrency"],
                                       c.concurrency, "CONCURRENCY_")

    @property
    def kernel(self):
        return self.response.kernel or self.response.launch.kernel

    @property
    def stale(self):
        return list(self.response.stale)

    @property
    def device_model(self):
        return self.response.device_model

    @property
    def tuned_shape(self):
        return tuple(self.response.tuned_shape)

    @property
    def shape_distance(self):
        return self.response.shape_distance

    @property
    def source_hash(self):
        return self.response.source_hash

    @property
    def source(self):
        return self.response.source

    @property
    def cubin(self):
        return self.response.cubin

    @property
    def time_us(self):
        return self.response.time_us

    @property
    def gbps(self):
        return self.response.gbps

    @property
    def tflops(self):
        return self.response.tflops

    @property
    def percent_of_reference(self):
        return self.response.percent_of_reference

    @property
    def measured_at_asked_shape(self):
        return self.response.measured_at_asked_shape

    @property
    def predicted_time_us(self):
        return self.response.predicted_time_us

    @property
    def expected_slowdown(self):
        return self.response.expected_slowdown

    @property
    def job_id(self):
        return self.response.job_id

    def __repr__(self):
        shape = "x".join(str(d) for d in self.shape)
        where = "table" if self.offline else "daemon"
        figures = f", {self.time_us:g} us" if self.time_us else ""
        stale = f", stale: {'; '.join(self.stale)}" if self.stale else ""
        return (f"<cutune.Answer {self.family} {shape} {self.dtype} on {self.device_model} "
                f"({where}): {self.rung}, {self.params}{figures}{stale}>")
