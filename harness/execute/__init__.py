"""Running an agent on one scenario iteration: request -> client(s) -> parsed output.

Holds ``execution`` (a declared agent's call or tool loop, a Python entry point or a
command driving the cached client). May import the stages below it: core, documents,
requests (and the wire formats), cache, refresh, clients, providers, the wire binding.
"""
