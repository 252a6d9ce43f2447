"""The memory page: a small web app, served by ``pcai run``, to see and shape one's memories."""
