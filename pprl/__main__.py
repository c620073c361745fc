from pprl.cli import main

raise SystemExit(main())
