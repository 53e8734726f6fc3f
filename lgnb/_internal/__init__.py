"""Private building blocks shared by lgnb's layers. Not a public API."""
