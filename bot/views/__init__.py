"""Every quest as people see it on GitHub: its status comment, its ``questbot`` check run and
its pull request, kept current from the journal (the words are ``bot.words``')."""
