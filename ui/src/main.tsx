import { render } from 'preact'
import { App } from './app.tsx'
import './style.css'
import './pages.css'
import './dark.css'

render(<App />, document.getElementById('app')!)
