"""Who may do what: roles, the actions they allow, and the one check every handler and route goes through."""
