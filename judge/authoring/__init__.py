"""Writing a problem: `judge new`'s scaffold, statements and their Markdown, starters' names, problem
archives, the line of every key."""
