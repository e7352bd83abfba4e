"""One webhook delivery → what it means: the concerns' routers combined in one place
(``routes``), and each intent handed to the concern that handles it (``intake``)."""
