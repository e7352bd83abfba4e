"""The quest's pull request and branch: reviews, closing and reopening it, pushes to it and to
the default branch, landing it at the approved head, and rolling it back."""
