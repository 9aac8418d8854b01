// The page's styles are bundled by esbuild; importing them only pulls them into the bundle.
declare module '*.css'
