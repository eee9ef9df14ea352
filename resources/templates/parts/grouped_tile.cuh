    // Block -> output tile (tileM, tileN), kGroupM block-rows at a time so that they share B panels
    // in L2. Needs kGroupM, kTilesM, kTilesN.
    const int tile = blockIdx.x;
    const int group = tile / (kGroupM * kTilesN);
    const int firstM = group * kGroupM;
    const int groupRows = min(kTilesM - firstM, kGroupM);
    const int tileM = firstM + (tile % (kGroupM * kTilesN)) % groupRows;
    const int tileN = (tile % (kGroupM * kTilesN)) / groupRows;
