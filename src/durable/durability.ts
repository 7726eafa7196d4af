/** What a commit that has returned survives (`OpenDurableStateOptions.durability`). */
export type Durability = 'power-loss' | 'process-crash';
