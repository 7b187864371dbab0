from graphsite.cli import main

main()
