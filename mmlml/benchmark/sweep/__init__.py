"""The sweep: its definition, its trial queue and its planning, the
worker that runs its trials and the executors that start workers."""
