from graphsite.entry import main

main()
